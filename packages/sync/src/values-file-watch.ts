/**
 * The ConfigMaps of spec.helm.valuesFileRefs, watched by name (named-watch.ts) as Config Sync watches them:
 * creating, replacing or deleting one asks for a pass at once, not at the next spec.helm.period (1 h by
 * default). The manager's `<reconciler>-helm-values` Role allows the watch by resourceNames.
 */
import { configMapMapping, type KubeClient } from "@driftless/kube";
import { Defaults, SourceType, type RSync } from "@driftless/api";
import type { Logger } from "./log.ts";
import { NamedObjectWatch } from "./named-watch.ts";

/** The names a sync reads values from: none unless it renders a Helm chart. */
export function valuesFileNamesOf(sync: RSync | undefined): string[] {
  if (sync === undefined || (sync.spec.sourceType ?? Defaults.sourceType) !== SourceType.Helm) return [];
  return [...new Set((sync.spec.helm?.valuesFileRefs ?? []).flatMap((ref) => (ref.name ? [ref.name] : [])))];
}

/** Watches per sync at most; those past the first are read at every poll (spec.helm.period) instead. */
export const maxWatchedValuesFiles = 16;

export class ValuesFileWatch extends NamedObjectWatch {
  constructor(client: KubeClient, namespace: string, onChange: (reason: string) => void, log: Logger) {
    super({
      client,
      mapping: configMapMapping,
      namespace,
      what: "values ConfigMap",
      onChange,
      log,
      maxWatched: maxWatchedValuesFiles,
    });
  }
}
