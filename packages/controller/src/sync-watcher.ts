/**
 * Watches what the manager acts on (RootSyncs, RepoSyncs, Namespaces, the reconcilers' ServiceAccounts
 * and role bindings and, in deployment mode, their Deployments) and turns every meaningful event into
 * "look at this sync again". The
 * informers relist on 410 and back off on errors; their caches also answer "which syncs exist"
 * for the webhook receiver and the periodic resync.
 */
import { Kind, RootSyncNamespace, isSyncKind } from "@driftless/api";
import { Informer, isNotFound, KubeApiError, type KubeClient, type KubeObject } from "@driftless/kube";
import { ManagerTrigger, type SyncRef } from "@driftless/queue";
import type { Logger } from "@driftless/sync";
import { cachedLabelled, cachedNamespace, cachedSync } from "./cached-forms.ts";
import { managedByManagerSelector, syncOfLabels } from "./labels.ts";
import { Resource } from "./resources.ts";

export interface SyncWatcherOptions {
  readonly client: KubeClient;
  /** Label selector limiting which syncs this manager serves (undefined: all). */
  readonly syncSelector: string | undefined;
  /** Also watch reconciler Deployments (deployment mode), to repair one deleted or changed by hand. */
  readonly watchDeployments: boolean;
  readonly log: Logger;
  readonly onSync: (sync: SyncRef, trigger: ManagerTrigger) => void;
}

export function refOf(obj: KubeObject): SyncRef | undefined {
  const kind = obj.kind;
  const namespace = obj.metadata.namespace;
  if (!isSyncKind(kind) || namespace === undefined) return undefined;
  return { kind, namespace, name: obj.metadata.name };
}

/**
 * The reconciler writes status after every pass; only changes to what the manager acts on
 * (spec, deletion, finalizers, labels, annotations) need a manager job.
 */
export function needsManager(obj: KubeObject, old: KubeObject | undefined): boolean {
  if (old === undefined) return true;
  const a = obj.metadata;
  const b = old.metadata;
  return (
    a.generation !== b.generation ||
    a.deletionTimestamp !== b.deletionTimestamp ||
    JSON.stringify(a.finalizers ?? []) !== JSON.stringify(b.finalizers ?? []) ||
    JSON.stringify(a.labels ?? {}) !== JSON.stringify(b.labels ?? {}) ||
    JSON.stringify(a.annotations ?? {}) !== JSON.stringify(b.annotations ?? {})
  );
}

function terminating(ns: KubeObject): boolean {
  return (
    ns.metadata.deletionTimestamp !== undefined ||
    (ns["status"] as { phase?: unknown } | undefined)?.phase === "Terminating"
  );
}

/**
 * Whether a sync kind's CRD is installed, as its informer's lists find it. One answering 404 is served as
 * none of that kind: the manager is ready and serves the other kind, as Config Sync's is without the RootSync
 * CRD (its e2e TestReconcilerManagerRootSyncCRDMissing). The informer keeps listing, so once the CRD is
 * installed its syncs arrive as adds.
 */
class KindPresence {
  #absent = false;
  #answered!: () => void;
  /** Resolves once a list has found the kind missing (the informer's own synced() covers it found). */
  readonly absentOnce = new Promise<void>((resolve) => (this.#answered = resolve));

  get absent(): boolean {
    return this.#absent;
  }

  /** Called with every list or watch failure of the kind's informer. */
  observe(error: Error): void {
    if (!(error instanceof KubeApiError) || !isNotFound(error)) return;
    this.#absent = true;
    this.#answered();
  }
}

export class SyncWatcher {
  readonly #options: SyncWatcherOptions;
  readonly #rootSyncs: Informer;
  readonly #repoSyncs: Informer;
  readonly #presence = new Map<Informer, KindPresence>();
  readonly #namespaces: Informer;
  readonly #deployments: Informer | undefined;
  /** The reconcilers' ServiceAccounts, RoleBindings and ClusterRoleBindings: one deleted is set up again at once. */
  readonly #identities: readonly Informer[];

  constructor(options: SyncWatcherOptions) {
    this.#options = options;
    const onError = (what: string) => (error: Error) =>
      options.log.warn("watch failed; retrying", { watch: what, error: error.message });
    const selector = options.syncSelector === undefined ? {} : { labelSelector: options.syncSelector };
    // RootSyncs outside config-management-system are watched too, only to be reported Stalled.
    // Each cache keeps only what is read from it (cached-forms.ts): with 1,000 syncs, full copies of
    // every sync, namespace and Deployment were the bulk of the manager's live heap.
    const syncs = { ...selector, transform: cachedSync };
    const syncInformer = (resource: typeof Resource.RootSync | typeof Resource.RepoSync, what: string): Informer => {
      const presence = new KindPresence();
      const logged = onError(what);
      const informer = new Informer(options.client, resource, {
        ...syncs,
        onError: (error) => {
          presence.observe(error);
          logged(error);
        },
      });
      this.#presence.set(informer, presence);
      return informer;
    };
    this.#rootSyncs = syncInformer(Resource.RootSync, "rootsyncs");
    this.#repoSyncs = syncInformer(Resource.RepoSync, "reposyncs");
    this.#namespaces = new Informer(options.client, Resource.Namespace, {
      transform: cachedNamespace,
      onError: onError("namespaces"),
    });
    // Only a Deployment's labels are read here (which sync to repair); jobs read the Deployment itself.
    this.#deployments = options.watchDeployments
      ? new Informer(options.client, Resource.Deployment, {
          namespace: RootSyncNamespace,
          labelSelector: managedByManagerSelector,
          metadataOnly: true,
          transform: cachedLabelled,
          onError: onError("deployments"),
        })
      : undefined;
    // As Config Sync's reconciler-manager watches them: without these, a binding removed by hand cut a
    // reconciler's rights until the next periodic resync (5 minutes).
    const identity = { labelSelector: managedByManagerSelector, metadataOnly: true, transform: cachedLabelled };
    this.#identities = [
      new Informer(options.client, Resource.ServiceAccount, {
        ...identity,
        namespace: RootSyncNamespace,
        onError: onError("serviceaccounts"),
      }),
      new Informer(options.client, Resource.RoleBinding, { ...identity, onError: onError("rolebindings") }),
      new Informer(options.client, Resource.ClusterRoleBinding, {
        ...identity,
        onError: onError("clusterrolebindings"),
      }),
    ];

    for (const informer of [this.#rootSyncs, this.#repoSyncs]) {
      informer.on("add", (obj) => this.#emit(obj, ManagerTrigger.Watch));
      informer.on("update", (obj, old) => {
        if (needsManager(obj, old)) this.#emit(obj, ManagerTrigger.Watch);
      });
      informer.on("delete", (obj) => this.#emit(obj, ManagerTrigger.Watch));
    }
    // A namespace that begins terminating is what unblocks its RepoSyncs (reconcile-sync.ts).
    const onNamespace = (ns: KubeObject, deleted: boolean): void => {
      if (!deleted && !terminating(ns)) return;
      for (const sync of this.syncsIn(ns.metadata.name)) options.onSync(sync, ManagerTrigger.Namespace);
    };
    this.#namespaces.on("add", (ns) => onNamespace(ns, false));
    this.#namespaces.on("update", (ns) => onNamespace(ns, false));
    this.#namespaces.on("delete", (ns) => onNamespace(ns, true));
    // A piece of one sync's reconciler changed or deleted: that sync, only if this manager serves it (the
    // pieces of every manager sharing the cluster come through here, and one of a sync out of scope would
    // be let go, torn down, as one that left it). Whether the object names a sync at all is the answer.
    const repairOwner = (obj: KubeObject): boolean => {
      if (syncOfLabels(obj.metadata.labels) === undefined) return false;
      const sync = pieceOwnerOf(obj);
      if (sync !== undefined && this.serves(sync)) options.onSync(sync, ManagerTrigger.Workload);
      return true;
    };
    if (this.#deployments !== undefined) {
      this.#deployments.on("update", repairOwner);
      this.#deployments.on("delete", repairOwner);
    }
    for (const informer of this.#identities) {
      // A shared binding (one subject per sync) only deleted, and only the syncs it may have served: a
      // namespace's base RoleBinding its RepoSyncs (the last one's teardown deletes it, which must not set
      // up a thousand others), a ClusterRoleBinding all. Its updates are each sync's own setup adding itself.
      informer.on("update", repairOwner);
      informer.on("delete", (obj) => {
        if (repairOwner(obj)) return;
        const namespace = obj.metadata.namespace;
        const served = namespace === undefined ? this.syncRefs() : this.syncsIn(namespace);
        for (const ref of served) options.onSync(ref, ManagerTrigger.Workload);
      });
    }
  }

  start(): void {
    for (const informer of this.#informers()) informer.start();
  }

  /** Every cache has its first list; a sync kind whose CRD is not installed counts as listed, empty. */
  async synced(): Promise<void> {
    await Promise.all(
      this.#informers().map((i) => {
        const presence = this.#presence.get(i);
        return presence === undefined ? i.synced() : Promise.race([i.synced(), presence.absentOnce]);
      }),
    );
  }

  get hasSynced(): boolean {
    return this.#informers().every((i) => i.hasSynced || this.#presence.get(i)?.absent === true);
  }

  /**
   * Whether `kind`'s syncs are not known: its informer has never listed them (the CRD missing, or a 404 of a
   * discovery race). Its empty cache says nothing about which syncs exist, so nothing of it is an orphan.
   */
  unlisted(kind: SyncRef["kind"]): boolean {
    return !(kind === Kind.RootSync ? this.#rootSyncs : this.#repoSyncs).hasSynced;
  }

  /** Whether `sync` is one this manager serves (in its caches: it exists and its selector takes it). */
  serves(sync: SyncRef): boolean {
    const informer = sync.kind === Kind.RootSync ? this.#rootSyncs : this.#repoSyncs;
    return informer.get(sync.namespace, sync.name) !== undefined;
  }

  /** Every sync this manager serves, as last seen. */
  syncs(): KubeObject[] {
    return [...this.#rootSyncs.list(), ...this.#repoSyncs.list()];
  }

  syncRefs(): SyncRef[] {
    return this.syncs().flatMap((obj) => refOf(obj) ?? []);
  }

  /** RepoSyncs in a namespace (RootSyncs have no stake in a namespace's deletion). */
  syncsIn(namespace: string): SyncRef[] {
    return this.#repoSyncs.list().flatMap((obj) => {
      const ref = refOf(obj);
      return ref !== undefined && ref.kind === Kind.RepoSync && ref.namespace === namespace ? [ref] : [];
    });
  }

  async stop(): Promise<void> {
    await Promise.all(this.#informers().map((i) => i.stop()));
  }

  #informers(): Informer[] {
    return [
      this.#rootSyncs,
      this.#repoSyncs,
      this.#namespaces,
      ...(this.#deployments === undefined ? [] : [this.#deployments]),
      ...this.#identities,
    ];
  }

  #emit(obj: KubeObject, trigger: ManagerTrigger): void {
    const ref = refOf(obj);
    if (ref !== undefined) this.#options.onSync(ref, trigger);
  }
}

/**
 * The sync whose reconciler `obj` is a piece of, by its labels, where such a piece can be: a RepoSync's are in
 * config-management-system (ServiceAccount, Deployment) or its own namespace (bindings), as Config Sync maps a
 * RoleBinding only to the RepoSyncs of its namespace. Labels are anyone's to write: a RoleBinding a tenant labels
 * for another namespace's RepoSync sets up nothing of that sync's.
 */
export function pieceOwnerOf(obj: KubeObject): SyncRef | undefined {
  const sync = syncOfLabels(obj.metadata.labels);
  const namespace = obj.metadata.namespace;
  if (sync === undefined || sync.kind !== Kind.RepoSync || namespace === undefined) return sync;
  return namespace === sync.namespace || namespace === RootSyncNamespace ? sync : undefined;
}
