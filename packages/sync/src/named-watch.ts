/**
 * Objects a sync's source reads by name from its own namespace (the Secrets of secretRef and caCertSecretRef, the
 * ConfigMaps of spec.helm.valuesFileRefs), watched as Config Sync's reconciler-manager watches them: creating,
 * changing or deleting one asks for a pass at once, not at the next poll (spec.<source>.period; 1 h for Helm).
 * One metadata-only informer per name, by a `metadata.name` field selector, which the manager's per-sync Role
 * allows by resourceNames: no list of the namespace, and no data held. The pass still reads each one with a GET
 * and says what it read, so an event at that version is no change and one after it always is.
 */
import {
  Informer,
  isForbidden,
  isUnauthorized,
  type KubeClient,
  type KubeObject,
  type ResourceMapping,
} from "@driftless/kube";
import type { Logger } from "./log.ts";

/** What a fetch tells the watch, and what a fetch asks of it. */
export interface NamedReads {
  /** Changes the watch has seen: a new count makes even a drift pass read the source again. */
  readonly changes: number;
  /** What a fetch read of `name` (undefined: not found). */
  read(name: string, object: KubeObject | undefined): void;
}

export interface NamedWatchOptions {
  readonly client: KubeClient;
  readonly mapping: ResourceMapping;
  readonly namespace: string;
  /** What the objects are, for logs and pass reasons ("Secret", "values ConfigMap"). */
  readonly what: string;
  /** Asks for a pass that reads the source again. */
  readonly onChange: (reason: string) => void;
  readonly log: Logger;
  /**
   * Watches at most: each is a connection to the API server, and a spec may name any number of objects.
   * Those past it are read at every poll instead.
   */
  readonly maxWatched?: number;
}

export class NamedObjectWatch implements NamedReads {
  readonly #options: NamedWatchOptions;
  readonly #informers = new Map<string, Informer>();
  /** Each object's resourceVersion as the last fetch read it (undefined: not found). */
  readonly #read = new Map<string, string | undefined>();
  #changes = 0;
  #stopped = false;
  /** How many names the last over-long spec had, so that it is logged once, not at every job. */
  #unwatchedLogged = 0;

  constructor(options: NamedWatchOptions) {
    this.#options = options;
  }

  get changes(): number {
    return this.#changes;
  }

  /** Watches exactly `names` from now on (none once the spec names none). */
  async follow(names: readonly string[]): Promise<void> {
    const max = this.#options.maxWatched ?? Number.POSITIVE_INFINITY;
    const wanted = new Set(names.slice(0, max));
    if (names.length > max && this.#unwatchedLogged !== names.length) {
      this.#unwatchedLogged = names.length;
      this.#options.log.warn(`too many ${this.#options.what}s to watch: the rest are read at each poll`, {
        named: names.length,
        watched: max,
        unwatched: names.slice(max, max + 5),
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

  read(name: string, object: KubeObject | undefined): void {
    this.#read.set(name, object?.metadata.resourceVersion);
  }

  /** Ends every watch, for good: a pass still running when the reconciler stops starts none. */
  stop(): Promise<void> {
    this.#stopped = true;
    return this.follow([]);
  }

  #start(name: string): Informer {
    const { client, mapping, namespace, what, log } = this.#options;
    let refusalLogged = false;
    const informer = new Informer(client, mapping, {
      namespace,
      fieldSelector: `metadata.name=${name}`,
      metadataOnly: true,
      onError: (error) => {
        if (!isForbidden(error) && !isUnauthorized(error)) {
          log.warn(`watch of a ${what}: list or watch failed; retrying`, { name, error: error.message });
        } else if (!refusalLogged) {
          // Said once (the backoff retries every 30 s): a Role from an older manager may grant `get` alone.
          refusalLogged = true;
          log.warn(`watch of a ${what} not permitted: a change is read at the next poll; retrying`, {
            name,
            error: error.message,
          });
        }
      },
    });
    const changed = (why: string) => (object: KubeObject | undefined) => {
      // Not read yet: the pass that started the watch reads it. Read at this version: nothing new.
      if (!this.#read.has(name) || this.#read.get(name) === object?.metadata.resourceVersion) return;
      this.#changes++;
      this.#options.onChange(`${what} ${namespace}/${name} ${why}`);
    };
    informer.on("add", changed("created"));
    informer.on("update", changed("changed"));
    informer.on("delete", () => changed("deleted")(undefined));
    informer.start();
    return informer;
  }
}
