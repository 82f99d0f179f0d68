/**
 * The reconciler's own RSync, kept by a watch of that one object (a `metadata.name` field selector,
 * which the reconciler's Role allows by resourceNames): every poll used to GET it, 4 requests a minute
 * per idle sync at the default period, 4,000 at 1,000 syncs. Until the watch has listed (a Role that
 * does not allow it yet, say in the moment after the manager wrote it), each pass reads it with a GET
 * as before; the watch keeps retrying with its backoff.
 */
import { Informer, isForbidden, isUnauthorized, type KubeClient } from "@driftless/kube";
import type { SyncIdentity } from "@driftless/applier";
import type { Logger } from "./log.ts";
import { rsyncMapping, type WatchedSync } from "./rsync.ts";

export class OwnSyncWatch {
  readonly #informer: Informer;
  readonly #identity: SyncIdentity;
  /** A refusal is said once: retried every backoff step, it would be a line every 30 s for good. */
  #refusalLogged = false;

  constructor(client: KubeClient, identity: SyncIdentity, log: Logger) {
    this.#identity = identity;
    this.#informer = new Informer(client, rsyncMapping(identity.kind), {
      namespace: identity.namespace,
      fieldSelector: `metadata.name=${identity.name}`,
      onError: (error) => {
        if (!isForbidden(error) && !isUnauthorized(error)) {
          log.warn("watch of its own sync: list or watch failed; retrying", { error: error.message });
        } else if (!this.#refusalLogged) {
          // Debug: the manager withdraws the Role as the sync goes, while this process may still run; a
          // refusal that matters also refuses the pass's own read, which reports it on the sync.
          this.#refusalLogged = true;
          log.debug("watch of its own sync not permitted: passes read it instead; retrying", { error: error.message });
        }
      },
    });
  }

  start(): void {
    this.#informer.start();
  }

  /** Calls `listener` when the sync is seen being deleted (its deletionTimestamp set) or gone. */
  onDeletion(listener: () => void): void {
    const check = (object: { readonly metadata: { readonly deletionTimestamp?: string } }): void => {
      if (object.metadata.deletionTimestamp !== undefined) listener();
    };
    this.#informer.on("add", check);
    this.#informer.on("update", check);
    this.#informer.on("delete", () => listener());
  }

  /** Calls `listener` with each new generation of the sync's spec the watch sees (an update that bumped it). */
  onNewGeneration(listener: (generation: number) => void): void {
    this.#informer.on("update", (object, old) => {
      const generation = object.metadata.generation;
      if (generation !== undefined && generation !== old?.metadata.generation) listener(generation);
    });
  }

  current(): WatchedSync {
    if (!this.#informer.hasSynced) return { known: false };
    return { known: true, object: this.#informer.get(this.#identity.namespace, this.#identity.name) };
  }

  stop(): Promise<void> {
    return this.#informer.stop();
  }
}
