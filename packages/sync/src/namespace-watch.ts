/**
 * The cluster's Namespaces, for `mode: dynamic` NamespaceSelectors: one informer, started the first
 * time a source uses a dynamic selector, that lists them for the pass and asks for a pass whenever a
 * Namespace appears, goes, starts terminating or has its labels changed, so selected objects follow.
 * Stopped once a source is read without one (source-steps.ts); a later dynamic selector starts it again.
 */
import { Informer, namespaceMapping, type KubeClient, type KubeObject } from "@driftless/kube";
import type { LiveNamespace } from "@driftless/source";
import { untilListed } from "./first-list.ts";

/** How long a pass waits for the Namespaces' first list while it keeps failing (a 403 fails at once). */
const listDeadlineMs = 30_000;

export class NamespaceWatch {
  readonly #client: KubeClient;
  readonly #onChange: (reason: string) => void;
  readonly #stopping: AbortSignal | undefined;
  #informer: Informer | undefined;

  /** `stopping`: the reconciler stopping, which ends a wait for the first list. */
  constructor(client: KubeClient, onChange: (reason: string) => void, stopping?: AbortSignal) {
    this.#client = client;
    this.#onChange = onChange;
    this.#stopping = stopping;
  }

  /**
   * The Namespaces as the watch cache has them; the first call starts the watch and waits for its list,
   * bounded: a reconciler that may not list Namespaces gets a ListFailedError, not a pass that never ends.
   */
  async list(): Promise<LiveNamespace[]> {
    const informer = this.#informer ?? this.#start();
    await untilListed(informer, namespaceMapping, listDeadlineMs, this.#stopping);
    return informer.list().map(liveNamespace);
  }

  /** True while the Namespaces are watched (from the first dynamic selector until `stop`). */
  get watching(): boolean {
    return this.#informer !== undefined;
  }

  async stop(): Promise<void> {
    await this.#informer?.stop();
    this.#informer = undefined;
  }

  #start(): Informer {
    const informer = new Informer(this.#client, namespaceMapping);
    // Events of the first list are not changes: the pass that started the watch reads that list.
    const changed = (why: string) => (obj: KubeObject) => {
      if (informer.hasSynced) this.#onChange(`namespace ${obj.metadata.name} ${why}`);
    };
    informer.on("add", changed("added"));
    informer.on("delete", changed("deleted"));
    informer.on("update", (obj, old) => {
      const before = old === undefined ? undefined : JSON.stringify(selectedBy(liveNamespace(old)));
      if (before !== JSON.stringify(selectedBy(liveNamespace(obj)))) changed("relabelled")(obj);
    });
    informer.start();
    this.#informer = informer;
    return informer;
  }
}

/** What a selector looks at: labels (in a stable order) and whether it is terminating. */
function selectedBy(ns: LiveNamespace): unknown {
  return [Object.entries(ns.labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)), ns.terminating === true];
}

function liveNamespace(obj: KubeObject): LiveNamespace {
  const status = (obj as { status?: { phase?: unknown } }).status;
  return {
    name: obj.metadata.name,
    labels: obj.metadata.labels ?? {},
    ...(status?.phase === "Terminating" ? { terminating: true } : {}),
  };
}

/** A stable digest of the Namespaces, to tell whether a declaration made from them is still current. */
export function namespacesDigest(namespaces: readonly LiveNamespace[]): string {
  return JSON.stringify(
    [...namespaces]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((ns) => [ns.name, selectedBy(ns)]),
  );
}
