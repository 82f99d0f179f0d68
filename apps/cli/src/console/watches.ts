/**
 * What the console knows of the cluster, kept by watches with the user's own client: every RootSync
 * and RepoSync the user may list (always), and for a sync's page its ResourceGroup, its Events and its
 * reconciler's pods (while someone looks at it). A change tells the listeners; pages read the caches,
 * so a page view costs the API server nothing.
 */
import { EventEmitter } from "node:events";
import { nsReconcilerName, rootReconcilerName, RootSyncNamespace, SyncLabel } from "@driftless/api";
import { resourceGroupMapping } from "@driftless/applier";
import { Informer, type KubeClient, type KubeObject, type ResourceMapping } from "@driftless/kube";
import { isRefusal } from "../interrupt.ts";
import { sorted, syncMappings, type SyncRef } from "../sync-objects.ts";

const eventMapping: ResourceMapping = {
  group: "",
  version: "v1",
  kind: "Event",
  resource: "events",
  namespaced: true,
  verbs: ["list", "watch"],
};
const podMapping: ResourceMapping = {
  group: "",
  version: "v1",
  kind: "Pod",
  resource: "pods",
  namespaced: true,
  verbs: ["list", "watch"],
};

/** managedFields are often most of an object and never shown. */
const slim = (obj: KubeObject): KubeObject => {
  if (obj.metadata.managedFields === undefined) return obj;
  const { managedFields: _dropped, ...metadata } = obj.metadata;
  return { ...obj, metadata };
};

/** A watch and the reason it cannot serve, when the API server refuses it (RBAC decides what one sees). */
export interface WatchState {
  readonly synced: boolean;
  readonly error?: string;
  /** The error is the API server's refusal (403, 401): it stays until RBAC changes. */
  readonly refused?: boolean;
}

function stateOf(informer: Informer): WatchState {
  const error = informer.lastError;
  if (error === undefined) return { synced: informer.hasSynced };
  return { synced: informer.hasSynced, error: error.message, refused: isRefusal(error) };
}

function watch(informer: Informer, emitter: EventEmitter): void {
  for (const event of ["add", "update", "delete"] as const) informer.on(event, () => emitter.emit("change"));
  informer.start();
}

/** Listed, or failed to: either way a page can say what it knows (the refusal shows as the API server's answer). */
function settled(informer: Informer): boolean {
  return informer.hasSynced || informer.lastError !== undefined;
}

/**
 * Waits, at most `ms`, until each informer has listed or failed to (`changes` is told of every failure:
 * the informers' onError emits it). A refused or unreachable watch never lists; waiting for it would
 * hold every page for all of `ms`.
 */
export async function settledWithin(
  informers: readonly Informer[],
  changes: EventEmitter<{ change: [] }>,
  ms: number,
): Promise<void> {
  if (informers.every(settled)) return;
  await new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      changes.off("change", check);
      resolve();
    };
    const check = (): void => {
      if (informers.every(settled)) done();
    };
    const timer = setTimeout(done, ms);
    changes.on("change", check);
    for (const informer of informers) if (!informer.hasSynced) informer.synced().then(check, check);
  });
}

export class SyncWatches extends EventEmitter<{ change: [] }> {
  readonly #informers: Informer[];

  constructor(client: KubeClient, namespace: string | undefined) {
    super();
    // A failure, or the end of one, changes what a page says (the refusal shown or not).
    const onError = (): void => void this.emit("change");
    this.#informers = syncMappings.map(
      (m) =>
        new Informer(client, m, {
          ...(namespace === undefined ? {} : { namespace }),
          transform: slim,
          onError,
          onRecovered: onError,
        }),
    );
    for (const informer of this.#informers) watch(informer, this);
  }

  syncs(): KubeObject[] {
    return this.#informers.flatMap((i) => sorted(i.list()));
  }

  get(ref: SyncRef): KubeObject | undefined {
    return this.#informers.find((i) => i.mapping.kind === ref.kind)?.get(ref.namespace, ref.name);
  }

  states(): { readonly kind: string; readonly state: WatchState }[] {
    return this.#informers.map((i) => ({ kind: i.mapping.kind, state: stateOf(i) }));
  }

  /** Each watch listed or refused (at most `ms`). */
  settled(ms: number): Promise<void> {
    return settledWithin(this.#informers, this, ms);
  }

  /**
   * Waits, at most `ms`, until the cache holds `ref` at `resourceVersion`: the version the API server
   * answered a write of ours with, so a page rendered next shows that write, not the state before it.
   */
  async holds(ref: SyncRef, resourceVersion: string | undefined, ms: number): Promise<void> {
    if (resourceVersion === undefined) return;
    const current = (): boolean => atOrAfter(this.get(ref)?.metadata.resourceVersion, resourceVersion);
    if (current()) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.off("change", check);
        resolve();
      };
      const check = (): void => {
        if (current()) done();
      };
      const timer = setTimeout(done, ms);
      this.on("change", check);
    });
  }

  async stop(): Promise<void> {
    await Promise.all(this.#informers.map((i) => i.stop()));
  }
}

/** The name of a sync's reconciler Deployment (and process), as the manager names it. */
export function reconcilerName(ref: SyncRef): string {
  return ref.kind === "RootSync" ? rootReconcilerName(ref.name) : nsReconcilerName(ref.namespace, ref.name);
}

/** One sync's ResourceGroup, Events and reconciler pods. */
export class DetailWatch extends EventEmitter<{ change: [] }> {
  readonly group: Informer;
  readonly events: Informer;
  readonly pods: Informer;

  constructor(client: KubeClient, ref: SyncRef) {
    super();
    // A failure, or the end of one, changes what a page says (the refusal shown or not).
    const onError = (): void => void this.emit("change");
    const byName = `metadata.name=${ref.name}`;
    this.group = new Informer(client, resourceGroupMapping, {
      namespace: ref.namespace,
      fieldSelector: byName,
      transform: slim,
      onError,
      onRecovered: onError,
    });
    this.events = new Informer(client, eventMapping, {
      namespace: ref.namespace,
      fieldSelector: `involvedObject.kind=${ref.kind},involvedObject.name=${ref.name}`,
      transform: slim,
      onError,
      onRecovered: onError,
    });
    this.pods = new Informer(client, podMapping, {
      namespace: RootSyncNamespace,
      labelSelector: `${SyncLabel.DeploymentName}=${reconcilerName(ref)}`,
      transform: slim,
      onError,
      onRecovered: onError,
    });
    for (const informer of [this.group, this.events, this.pods]) watch(informer, this);
  }

  groupState(): WatchState {
    return stateOf(this.group);
  }
  eventState(): WatchState {
    return stateOf(this.events);
  }
  podState(): WatchState {
    return stateOf(this.pods);
  }

  /** Each watch listed or refused (at most `ms`). */
  settled(ms: number): Promise<void> {
    return settledWithin([this.group, this.events, this.pods], this, ms);
  }

  async stop(): Promise<void> {
    await Promise.all([this.group, this.events, this.pods].map((i) => i.stop()));
  }
}

/**
 * Detail watches shared by everyone looking at one sync, started on the first look and stopped a while
 * after the last one leaves (a page load and its live connection follow each other closely).
 */
export class DetailWatches {
  readonly #client: KubeClient;
  readonly #lingerMs: number;
  readonly #open = new Map<string, { watch: DetailWatch; users: number; timer?: NodeJS.Timeout }>();

  constructor(client: KubeClient, lingerMs = 30_000) {
    this.#client = client;
    this.#lingerMs = lingerMs;
  }

  acquire(ref: SyncRef): { readonly watch: DetailWatch; readonly release: () => void } {
    const key = `${ref.kind}/${ref.namespace}/${ref.name}`;
    let entry = this.#open.get(key);
    if (entry === undefined) {
      entry = { watch: new DetailWatch(this.#client, ref), users: 0 };
      this.#open.set(key, entry);
    }
    const held = entry;
    clearTimeout(held.timer);
    held.users++;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      if (--held.users > 0) return;
      held.timer = setTimeout(() => {
        if (held.users > 0) return;
        this.#open.delete(key);
        void held.watch.stop();
      }, this.#lingerMs);
      held.timer.unref();
    };
    return { watch: held.watch, release };
  }

  async stop(): Promise<void> {
    const open = [...this.#open.values()];
    this.#open.clear();
    for (const entry of open) clearTimeout(entry.timer);
    await Promise.all(open.map((e) => e.watch.stop()));
  }
}

/**
 * Whether the cache's version is `written` or a later write (the reconciler may write status right after
 * ours). resourceVersions are etcd revisions; a form that is no number only counts when equal.
 */
function atOrAfter(cached: string | undefined, written: string): boolean {
  if (cached === undefined) return false;
  if (cached === written) return true;
  const [a, b] = [Number(cached), Number(written)];
  return Number.isSafeInteger(a) && Number.isSafeInteger(b) && a > b;
}
