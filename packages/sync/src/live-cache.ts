import { ApplySetLabel, type DriftlessError } from "@driftless/api";
import {
  applySetId,
  cachedRecordValue,
  type LiveState,
  type ObjectId,
  type PlanOutline,
  type SyncIdentity,
} from "@driftless/applier";
import { Informer, storeKey, type KubeClient, type KubeObject, type ResourceMapping } from "@driftless/kube";
import { splitApiVersion } from "@driftless/source";
import { refused, untilListed, WatchRefusedError } from "./first-list.ts";
import { UndeclaredObjects } from "./undeclared-objects.ts";

export type InformerListener = (
  event: "add" | "update" | "delete",
  mapping: ResourceMapping,
  object: KubeObject,
) => void;

/** An object carrying this sync's ApplySet label that the last pass did not declare (left out of the cache). */
export type UndeclaredListener = (mapping: ResourceMapping, object: KubeObject) => void;

/**
 * A plan holding at least this many objects of one type does not watch that type while it writes it.
 * Below this, the echoes cost less than closing and re-opening the watch.
 */
const pauseFromPlannedObjects = 100;

/** A plan being applied (LiveState.applyingPlan), and which of its types it keeps unwatched, by key. */
interface PlanInProgress {
  readonly outline: PlanOutline;
  readonly pauses: Map<string, boolean>;
}

/**
 * Current state from watch caches: one informer per managed resource type, limited by a label
 * selector to objects of this sync's ApplySet (as Config Sync 1.19 filters its watches), so other
 * syncs' objects are neither sent nor cached, and scoped to the sync's namespace for a RepoSync.
 * Of those, only objects the last pass declared are kept (`declare`): anyone who can write an
 * object can forge the label, and must not grow this cache beyond what the sync declares (before
 * the first declaration after a start: beyond what its stored inventory records). A type neither
 * declared nor left in the inventory stops being watched after the pass's prune (`unwatchUnused`). A pass
 * over an unchanged cluster reads memory only; a miss (an object we have not labelled yet) falls
 * through to create, and a 409 to a fresh GET. A type whose watch has kept failing past
 * `watchDeadlineMs` is read from the server instead (see trusted()).
 */
export class InformerLiveState implements LiveState {
  /** The client the watches use; the remediator deletes through it what claims this sync undeclared. */
  readonly client: KubeClient;
  private readonly namespace: string | undefined;
  private readonly informers = new Map<string, { informer: Informer; mapping: ResourceMapping }>();
  private readonly listeners = new Set<InformerListener>();
  private readonly undeclaredListeners = new Set<UndeclaredListener>();
  private readonly transform: (obj: KubeObject) => KubeObject;
  private plan: PlanInProgress | undefined;
  private readonly listDeadlineMs: number;
  private readonly watchDeadlineMs: number;
  private readonly onInformerError: ((mapping: ResourceMapping, error: Error) => void) | undefined;
  private readonly onTypeGone: ((mapping: ResourceMapping) => void) | undefined;
  private readonly onTypeWatched: ((mapping: ResourceMapping) => void) | undefined;
  private readonly onWatchRefused: ((mapping: ResourceMapping) => void) | undefined;
  private readonly onTypesUnwatched: ((stopped: readonly ResourceMapping[]) => void) | undefined;
  private readonly stopping: AbortSignal | undefined;
  private readonly labelSelector: string;
  /**
   * Store keys (`namespace/name`) of the objects to cache by `group/kind`: the last declaration's, or
   * before it those of the stored inventory (`keepInventory`, at a restart). Undefined until either:
   * then nothing is cached, and no informer runs.
   */
  private wanted: Map<string, Set<string>> | undefined;
  /** Labelled for this sync, not declared by it: left out of the cache, only their keys kept. */
  private readonly undeclared = new UndeclaredObjects();
  /**
   * Types whose watch ended because their CRD went, by informer key: told unwatched (`onTypesUnwatched`) once
   * no longer used, as a stopped informer is, so what follows the last custom resource type (the CRD watch) ends.
   */
  private readonly gone = new Map<string, ResourceMapping>();

  constructor(
    client: KubeClient,
    options: {
      /** Whose ApplySet label the watches select. */
      readonly sync: SyncIdentity;
      readonly namespace?: string;
      /** The last-applied annotation: cached objects keep a digest of it (@driftless/applier record-digest). */
      readonly recordAnnotation?: string;
      /** How long a type's first list may keep failing before its objects fail (default 30 s). */
      readonly listDeadlineMs?: number;
      /**
       * How long a type's watch may keep failing before passes stop trusting its cache and read its
       * objects from the server (default 30 s). Shorter outages are caught up by the watch's replay
       * or the informer's relist, whose events the remediator checks.
       */
      readonly watchDeadlineMs?: number;
      /** Failed lists and watches (each informer retries with backoff). */
      readonly onInformerError?: (mapping: ResourceMapping, error: Error) => void;
      /** A type's list or watch answered 404 (its CRD is gone): its informer has stopped. */
      readonly onTypeGone?: (mapping: ResourceMapping) => void;
      /** A type is watched for the first time (its informer starts). */
      readonly onTypeWatched?: (mapping: ResourceMapping) => void;
      /**
       * The API server began refusing a type's watch (RBAC), maybe after the pass that started it ended:
       * told once a spell of watch failures (Informer.watchFailingSince), not at every refused retry.
       */
      readonly onWatchRefused?: (mapping: ResourceMapping) => void;
      /**
       * A pass stopped watching these types (`unwatchUnused`); each is given once, after its informer stopped, or
       * once no longer used after its CRD went (its watch ended then).
       */
      readonly onTypesUnwatched?: (stopped: readonly ResourceMapping[]) => void;
      /** The reconciler stopping: a pass waiting for a type's first list stops waiting. */
      readonly stopping?: AbortSignal;
    },
  ) {
    this.labelSelector = `${ApplySetLabel.PartOf}=${applySetId(options.sync)}`;
    this.onInformerError = options.onInformerError;
    this.onTypeGone = options.onTypeGone;
    this.onTypeWatched = options.onTypeWatched;
    this.onWatchRefused = options.onWatchRefused;
    this.onTypesUnwatched = options.onTypesUnwatched;
    this.stopping = options.stopping;
    this.client = client;
    this.listDeadlineMs = options.listDeadlineMs ?? 30_000;
    this.watchDeadlineMs = options.watchDeadlineMs ?? 30_000;
    this.namespace = options.namespace;
    this.transform = cachedForm(options.recordAnnotation);
  }

  async get(mapping: ResourceMapping, namespace: string | undefined, name: string): Promise<KubeObject | undefined> {
    const informer = await this.informerFor(mapping);
    return this.trusted(informer) ? informer.get(namespace, name) : this.client.get(mapping, namespace, name);
  }

  prepare(mappings: readonly ResourceMapping[]): void {
    for (const mapping of mappings) this.startedInformer(mapping);
  }

  cachedResourceVersion(mapping: ResourceMapping, namespace: string | undefined, name: string): string | undefined {
    const entry = this.informers.get(keyOf(mapping));
    if (entry === undefined || !entry.informer.hasSynced || !this.trusted(entry.informer)) return undefined;
    return entry.informer.resourceVersionOf(namespace, name);
  }

  /**
   * Whether the cache may answer for its type: not once its watch has been failing for
   * `watchDeadlineMs`. Such a cache is only as current as its last relist, and an object deleted
   * since would pass as Unchanged: a pass reads the type from the server instead (as DirectLiveState
   * does, one GET an object) until a watch is established again, so it re-creates what is missing
   * and reports what it cannot read.
   */
  private trusted(informer: Informer): boolean {
    const since = informer.watchFailingSince;
    return since === undefined || performance.now() - since < this.watchDeadlineMs;
  }

  watchRefusals(): readonly DriftlessError[] {
    const refusals: DriftlessError[] = [];
    for (const { informer, mapping } of this.informers.values()) {
      const error = informer.watchError;
      if (refused(error)) refusals.push(new WatchRefusedError(mapping, error));
    }
    return refusals;
  }

  remember(mapping: ResourceMapping, object: KubeObject): void {
    this.undeclared.settled(
      keyOf(mapping),
      storeKey(mapping.namespaced ? object.metadata.namespace : undefined, object.metadata.name),
    );
    this.informers.get(keyOf(mapping))?.informer.upsert(object);
    this.noteWrite(mapping);
  }

  forget(mapping: ResourceMapping, namespace: string | undefined, name: string): void {
    this.undeclared.settled(keyOf(mapping), storeKey(mapping.namespaced ? namespace : undefined, name));
    this.informers.get(keyOf(mapping))?.informer.forget(namespace, name);
    this.noteWrite(mapping);
  }

  /**
   * A bulk write (the first sync of a repository, a commit that changes every object) gets each of
   * its writes back as a watch event, one at a time: measured at 10,000 ConfigMaps, each cost the
   * API server ~80 µs and this process ~55 µs, a tenth of the write itself. So a type the plan holds
   * at least {@link pauseFromPlannedObjects} objects of is not watched while the plan writes it: its
   * watch pauses at the plan's first write to it (a plan that writes nothing, a resync, pauses
   * nothing), and an informer the plan starts lists without watching. When the plan is done the
   * watch resumes from where it stopped. The server replays what happened meanwhile in one burst
   * (~30 µs per event measured; 0.6–1.3 s for 10,000, alongside the pass's inventory and status
   * steps), and our own writes among it are dropped unparsed (Informer's echoes). Changes others made
   * meanwhile arrive then, and the remediator checks them against the new declaration.
   */
  applyingPlan(outline: PlanOutline): () => void {
    const plan: PlanInProgress = { outline, pauses: new Map() };
    this.plan = plan;
    return () => {
      if (this.plan === plan) this.plan = undefined;
      for (const { informer } of this.informers.values()) informer.resume();
    };
  }

  private noteWrite(mapping: ResourceMapping): void {
    if (this.pausedByPlan(mapping)) this.informers.get(keyOf(mapping))?.informer.pause();
  }

  /** Whether the plan in progress keeps this type unwatched once it writes to it. */
  private pausedByPlan(mapping: ResourceMapping): boolean {
    const plan = this.plan;
    if (plan === undefined) return false;
    const key = keyOf(mapping);
    let pauses = plan.pauses.get(key);
    if (pauses === undefined) {
      pauses = plan.outline.objectsOf(mapping) >= pauseFromPlannedObjects && !plan.outline.keepWatching(mapping);
      plan.pauses.set(key, pauses);
    }
    return pauses;
  }

  /**
   * The objects the pass is about to apply: from now on only they are cached. Labelled objects that
   * are not among them are counted (`undeclaredByType`), but not those the last pass declared: this
   * sync prunes or releases them. A type declared now at other versions only (its objects moved from
   * autoscaling/v1 to v2) stops being watched at the version it left.
   */
  declare(
    objects: Iterable<{ readonly id: ObjectId; readonly apiVersion: string }>,
    setAside: Iterable<ObjectId> = [],
  ): void {
    const wanted = new Map<string, Set<string>>();
    const versions = new Map<string, Set<string>>();
    for (const { id, apiVersion } of objects) {
      const type = addWanted(wanted, id);
      let declaredVersions = versions.get(type);
      if (declaredVersions === undefined) versions.set(type, (declaredVersions = new Set()));
      declaredVersions.add(splitApiVersion(apiVersion)?.version ?? apiVersion);
    }
    // Objects set aside for their kind (KNV1021) are still declared: their type deleted under them is someone
    // else's doing (a resource conflict), not this sync dropping the type.
    for (const id of setAside) addWanted(wanted, id);
    // What neither the last declaration nor the stored inventory held was never ours to prune: counted.
    const fromScratch = this.wanted === undefined;
    this.wanted = wanted;
    this.undeclared.declared((informer, key) => {
      const entry = this.informers.get(informer);
      return entry !== undefined && wanted.get(typeOf(entry.mapping))?.has(key) === true;
    });
    for (const [informerKey, { informer, mapping }] of this.informers) {
      const declaredVersions = versions.get(typeOf(mapping));
      if (declaredVersions !== undefined && !declaredVersions.has(mapping.version)) {
        this.stopInformer(informerKey, informer);
        continue;
      }
      this.retainWanted(informerKey, informer, mapping, fromScratch);
    }
  }

  /**
   * At a restart, before the first pass declares: the objects the stored inventory records (spec.resources)
   * are the ones cached, so the lists the restore starts keep no more than the sync last managed. Others
   * carrying the label are counted as undeclared. Ignored once a pass has declared.
   */
  keepInventory(ids: Iterable<ObjectId>): void {
    if (this.wanted !== undefined) return;
    const wanted = new Map<string, Set<string>>();
    for (const id of ids) addWanted(wanted, id);
    this.wanted = wanted;
    for (const [informerKey, { informer, mapping }] of this.informers)
      this.retainWanted(informerKey, informer, mapping, true);
  }

  /** Drops from one cache what `wanted` leaves out: counted when never ours, not when this sync prunes it. */
  private retainWanted(informerKey: string, informer: Informer, mapping: ResourceMapping, fromScratch: boolean): void {
    const keys = this.wanted?.get(typeOf(mapping));
    informer.retain((key) => {
      if (keys?.has(key) === true) return true;
      if (fromScratch) this.undeclared.leftOut(informerKey, key);
      else this.undeclared.released(informerKey, key);
      return false;
    });
  }

  /**
   * After a pass's prune: stops the informers of types it neither declares nor left in `inventory` (a
   * prune its finalizers hold, or held back by a failed apply, stays watched), as Config Sync's
   * remediator drops a watch once nothing of its type is declared. A type declared again gets a new one.
   */
  unwatchUnused(inventory: Iterable<Pick<ObjectId, "group" | "kind">>): void {
    const wanted = this.wanted;
    if (wanted === undefined) return;
    const used = new Set(wanted.keys());
    for (const id of inventory) used.add(`${id.group}/${id.kind}`);
    const stopped: ResourceMapping[] = [];
    for (const [key, { informer, mapping }] of [...this.informers]) {
      if (used.has(typeOf(mapping))) continue;
      this.stopInformer(key, informer);
      stopped.push(mapping);
    }
    for (const [key, mapping] of this.gone) {
      if (used.has(typeOf(mapping))) continue;
      this.gone.delete(key);
      stopped.push(mapping);
    }
    if (stopped.length > 0) this.onTypesUnwatched?.(stopped);
  }

  /** Whether the last declaration (or, before it, the stored inventory) holds objects of `mapping`'s type. */
  declares(mapping: ResourceMapping): boolean {
    return (this.wanted?.get(typeOf(mapping))?.size ?? 0) > 0;
  }

  /** The types watched now, one mapping per informer. */
  watchedTypes(): ResourceMapping[] {
    return [...this.informers.values()].map(({ mapping }) => mapping);
  }

  /**
   * Objects carrying this sync's label that it does not declare, by watched type (`Kind` or `Kind.group`,
   * 0 included): left out of the cache, counted from the watches as they come and go.
   */
  undeclaredByType(): Map<string, number> {
    return this.undeclared.byType();
  }

  /** How many objects the watch caches hold, over all types. */
  get size(): number {
    let objects = 0;
    for (const { informer } of this.informers.values()) objects += informer.size;
    return objects;
  }

  private accepts(mapping: ResourceMapping, informer: string, key: string, received: KubeObject): boolean {
    if (this.wanted?.get(typeOf(mapping))?.has(key) === true) {
      this.undeclared.settled(informer, key);
      return true;
    }
    this.undeclared.leftOut(informer, key);
    for (const listener of this.undeclaredListeners) listener(mapping, received);
    return false;
  }

  refresh(mapping: ResourceMapping, namespace: string | undefined, name: string): Promise<KubeObject | undefined> {
    return this.client.get(mapping, namespace, name);
  }

  /** Called for every watch event on a managed type (the remediator listens). */
  onEvent(listener: InformerListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Called for each labelled object left out of the cache because it is not declared (not for its deletion). */
  onUndeclared(listener: UndeclaredListener): () => void {
    this.undeclaredListeners.add(listener);
    return () => this.undeclaredListeners.delete(listener);
  }

  async stop(): Promise<void> {
    await Promise.all([...this.informers.values()].map(({ informer }) => informer.stop()));
    for (const key of this.informers.keys()) this.undeclared.untrack(key);
    this.informers.clear();
  }

  private stopInformer(key: string, informer: Informer): void {
    this.informers.delete(key);
    this.undeclared.untrack(key);
    void informer.stop().catch(() => undefined);
  }

  /**
   * Stops watching every version of a type whose CRD was deleted (the CRD watch says so): retrying
   * its watch would only collect 404s. A later use of the type (its CRD back) starts a new informer.
   */
  async stopWatching(group: string, resource: string): Promise<void> {
    const gone = [...this.informers].filter(
      ([, { mapping }]) => mapping.group === group && mapping.resource === resource,
    );
    for (const [key, { mapping }] of gone) this.forgetGoneType(key, mapping);
    await Promise.all(gone.map(([, { informer }]) => informer.stop()));
  }

  private async informerFor(mapping: ResourceMapping): Promise<Informer> {
    const informer = this.startedInformer(mapping);
    if (!informer.hasSynced) await untilListed(informer, mapping, this.listDeadlineMs, this.stopping);
    return informer;
  }

  /** A type whose CRD went: its informer dropped, kept in `gone` until a pass no longer uses it. */
  private forgetGoneType(key: string, mapping: ResourceMapping): void {
    this.informers.delete(key);
    this.undeclared.untrack(key);
    this.gone.set(key, mapping);
  }

  /** The type's informer, started (listing) if it was not yet. */
  private startedInformer(mapping: ResourceMapping): Informer {
    const key = keyOf(mapping);
    let entry = this.informers.get(key);
    if (entry === undefined) {
      let refusedSpell: number | undefined;
      this.gone.delete(key);
      this.undeclared.track(key, groupKindOf(mapping));
      const informer: Informer = new Informer(this.undeclared.observed(key, this.client), mapping, {
        ...(mapping.namespaced && this.namespace !== undefined ? { namespace: this.namespace } : {}),
        labelSelector: this.labelSelector,
        accept: (objectKey, received) => this.accepts(mapping, key, objectKey, received),
        // managedFields is often half an object and never read here; at 10,000 objects that is tens of MiB.
        transform: this.transform,
        onError: (error: Error) => {
          this.onInformerError?.(mapping, error);
          if (!refused(informer.watchError) || informer.watchFailingSince === refusedSpell) return;
          refusedSpell = informer.watchFailingSince;
          this.onWatchRefused?.(mapping);
        },
        // The type is gone (its CRD deleted): the informer ends instead of retrying a 404 for ever.
        onNotFound: () => {
          // A stopped informer's late 404 says nothing new: the type was told gone, or unwatched, already.
          if (this.informers.get(key)?.informer !== informer) return;
          this.forgetGoneType(key, mapping);
          this.onTypeGone?.(mapping);
        },
      });
      entry = { informer, mapping };
      this.informers.set(key, entry);
      for (const event of ["add", "update", "delete"] as const) {
        informer.on(event, (object) => {
          for (const listener of this.listeners) listener(event, mapping, object);
        });
      }
      // Started by a bulk plan (the first sync of this type): list now, watch once the plan is done.
      if (this.pausedByPlan(mapping)) informer.pause();
      informer.start();
      this.onTypeWatched?.(mapping);
    }
    return entry.informer;
  }
}

/**
 * The form a watch cache keeps an object in, made in one copy (it runs for every object listed,
 * watched or written): without managedFields, often half an object and never read here, and with
 * the last-applied record, when `recordAnnotation` is given, replaced by its digest
 * (@driftless/applier record-digest). At 10,000 objects each saves tens of MiB.
 */
function cachedForm(recordAnnotation: string | undefined): (obj: KubeObject) => KubeObject {
  return (obj) => {
    const meta = obj.metadata;
    const digest = recordAnnotation === undefined ? undefined : cachedRecordValue(meta.annotations?.[recordAnnotation]);
    if (meta.managedFields === undefined && digest === undefined) return obj;
    // Set to undefined rather than left out by a rest pattern, which V8 copies far more slowly;
    // readers and JSON.stringify treat the two alike.
    const metadata: KubeObject["metadata"] = { ...meta, managedFields: undefined };
    if (digest !== undefined && recordAnnotation !== undefined)
      metadata.annotations = { ...meta.annotations, [recordAnnotation]: digest };
    return { ...obj, metadata };
  };
}

/** Adds `id` to the store keys wanted by type; returns its type (`group/kind`). */
function addWanted(wanted: Map<string, Set<string>>, id: ObjectId): string {
  const type = `${id.group}/${id.kind}`;
  let keys = wanted.get(type);
  if (keys === undefined) wanted.set(type, (keys = new Set()));
  keys.add(storeKey(id.namespace, id.name));
  return type;
}

function typeOf(mapping: ResourceMapping): string {
  return `${mapping.group}/${mapping.kind}`;
}

/** A type as Kubernetes' GroupKind prints it: `ConfigMap`, `Deployment.apps`. */
function groupKindOf(mapping: ResourceMapping): string {
  return mapping.group === "" ? mapping.kind : `${mapping.kind}.${mapping.group}`;
}

function keyOf(mapping: ResourceMapping): string {
  return `${mapping.group}/${mapping.version}/${mapping.resource}`;
}
