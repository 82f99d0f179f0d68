/**
 * The ConfigMaps of spec.helm.valuesFileRefs, watched as Config Sync watches them: creating, replacing or
 * deleting one asks for a pass at once, not at the next spec.helm.period (1 h by default). One metadata-only
 * informer per name, by a `metadata.name` field selector, which the manager's `<reconciler>-helm-values` Role
 * allows by resourceNames: no list of the namespace's ConfigMaps. The pass still reads each one with a GET.
 */
import {
  configMapMapping,
  Informer,
  isForbidden,
  isUnauthorized,
  type KubeClient,
  type KubeObject,
} from "@driftless/kube";
import { Defaults, SourceType, type RSync } from "@driftless/api";
import type { Logger } from "./log.ts";

/** The names a sync reads values from: none unless it renders a Helm chart. */
export function valuesFileNamesOf(sync: RSync | undefined): string[] {
  if (sync === undefined || (sync.spec.sourceType ?? Defaults.sourceType) !== SourceType.Helm) return [];
  return [...new Set((sync.spec.helm?.valuesFileRefs ?? []).flatMap((ref) => (ref.name ? [ref.name] : [])))];
}

/**
 * Watches per sync at most: each is a connection to the API server, and the spec may name any number of
 * ConfigMaps. Those past the first are read at every poll (spec.helm.period) instead.
 */
export const maxWatchedValuesFiles = 16;

export class ValuesFileWatch {
  readonly #client: KubeClient;
  readonly #namespace: string;
  readonly #onChange: (reason: string) => void;
  readonly #log: Logger;
  readonly #informers = new Map<string, Informer>();
  /** Each ConfigMap's resourceVersion as the last fetch read it (undefined: not found). */
  readonly #read = new Map<string, string | undefined>();
  #changes = 0;
  #stopped = false;
  /** How many names the last over-long spec had, so that it is logged once, not at every job. */
  #unwatchedLogged = 0;

  constructor(client: KubeClient, namespace: string, onChange: (reason: string) => void, log: Logger) {
    this.#client = client;
    this.#namespace = namespace;
    this.#onChange = onChange;
    this.#log = log;
  }

  /** Changes seen so far: a fetch made before the latest one is stale, even for a drift pass. */
  get changes(): number {
    return this.#changes;
  }

  /** Watches exactly `names` from now on (the spec's valuesFileRefs; none once it names none). */
  async follow(names: readonly string[]): Promise<void> {
    const wanted = new Set(names.slice(0, maxWatchedValuesFiles));
    if (names.length > maxWatchedValuesFiles && this.#unwatchedLogged !== names.length) {
      this.#unwatchedLogged = names.length;
      this.#log.warn("too many values ConfigMaps to watch: the rest are read at each poll (spec.helm.period)", {
        named: names.length,
        watched: maxWatchedValuesFiles,
        unwatched: names.slice(maxWatchedValuesFiles, maxWatchedValuesFiles + 5),
      });
    }
    for (const [name, informer] of [...this.#informers]) {
      if (wanted.has(name)) continue;
      this.#informers.delete(name);
      this.#read.delete(name);
      await informer.stop();
    }
    if (this.#stopped) return;
    for (const name of wanted) if (!this.#informers.has(name)) this.#informers.set(name, this.#start(name));
  }

  /** What a fetch read of `name`: an event at that same version is no change. */
  read(name: string, configMap: KubeObject | undefined): void {
    this.#read.set(name, configMap?.metadata.resourceVersion);
  }

  /** Ends every watch, for good: a pass still running when the reconciler stops starts none. */
  stop(): Promise<void> {
    this.#stopped = true;
    return this.follow([]);
  }

  #start(name: string): Informer {
    let refusalLogged = false;
    const informer = new Informer(this.#client, configMapMapping, {
      namespace: this.#namespace,
      fieldSelector: `metadata.name=${name}`,
      metadataOnly: true,
      onError: (error) => {
        if (!isForbidden(error) && !isUnauthorized(error)) {
          this.#log.warn("watch of a values ConfigMap: list or watch failed; retrying", { name, error: error.message });
        } else if (!refusalLogged) {
          // Said once: the backoff retries it every 30 s. Polls still read the ConfigMap.
          refusalLogged = true;
          this.#log.warn("watch of a values ConfigMap not permitted: a change is read at the next poll; retrying", {
            name,
            error: error.message,
          });
        }
      },
    });
    const changed = (why: string) => (obj: KubeObject | undefined) => {
      // Not read yet: the pass that started the watch reads it. Read at this version: nothing new.
      if (!this.#read.has(name) || this.#read.get(name) === obj?.metadata.resourceVersion) return;
      this.#changes++;
      this.#onChange(`values ConfigMap ${this.#namespace}/${name} ${why}`);
    };
    informer.on("add", changed("created"));
    informer.on("update", changed("changed"));
    informer.on("delete", () => changed("deleted")(undefined));
    informer.start();
    return informer;
  }
}
