/**
 * The Secrets a sync's source reads (its secretRef and caCertSecretRef), watched by name (named-watch.ts) as
 * Config Sync's reconciler-manager watches them: creating, changing or deleting one asks for a pass that reads
 * them again at once, not at the next poll (1 h for Helm), so a missing Secret's KNV1061 is followed by a sync
 * as soon as someone creates it. The manager's `<reconciler>-secrets` Role allows the watch by resourceNames.
 */
import type { KubeClient } from "@driftless/kube";
import { Defaults, SourceType, type RSync } from "@driftless/api";
import type { Logger } from "./log.ts";
import { NamedObjectWatch } from "./named-watch.ts";
import { secretMapping } from "./rsync.ts";

/** The Secrets a pass reads for the sync's source (credentials.ts, artifact-credentials.ts); none for auth none. */
export function secretNamesReadBy(sync: RSync | undefined): string[] {
  if (sync === undefined) return [];
  const { git, oci, helm } = sync.spec;
  const sourceType = sync.spec.sourceType ?? Defaults.sourceType;
  const source = sourceType === SourceType.Oci ? oci : sourceType === SourceType.Helm ? helm : git;
  if (source === undefined) return [];
  // Git reads secretRef for every auth but none; OCI and Helm for token only.
  const readsSecretRef = sourceType === SourceType.Git ? source.auth !== "none" : source.auth === "token";
  const names = [readsSecretRef ? source.secretRef?.name : undefined, source.caCertSecretRef?.name];
  return [...new Set(names.filter((n): n is string => n !== undefined && n !== ""))];
}

export class SecretWatch extends NamedObjectWatch {
  constructor(client: KubeClient, namespace: string, onChange: (reason: string) => void, log: Logger) {
    super({ client, mapping: secretMapping, namespace, what: "Secret", onChange, log });
  }
}
