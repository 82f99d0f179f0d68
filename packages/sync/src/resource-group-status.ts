import { KnvCode, ManagedAnnotation, inventoryId, sourceHash as commitHash } from "@driftless/api";
import {
  computeHealth,
  failureConditions,
  groupConditions,
  HealthStatus,
  idKey,
  isManagementDisabled,
  mapLimit,
  ownershipCondition,
  reconcileOf,
  resourceGroupMapping,
  type ApplyOutcome,
  Inventory,
  type ObjectId,
  type ResourceStatusEntry,
  type SyncIdentity,
} from "@driftless/applier";
import { isForbidden, RestMapper, type KubeObject, type ResourceMapping } from "@driftless/kube";
import type { Metrics } from "@driftless/metrics";
import type { InformerLiveState } from "./live-cache.ts";
import type { Logger } from "./log.ts";
import {
  actuationOf,
  entryOf,
  pruneEntries,
  restoredEntry,
  type PrunesInProgress,
  type Tracked,
} from "./resource-group-entries.ts";
import { recordResourceGroupMetrics } from "./resource-group-metrics.ts";

export type { PrunesInProgress } from "./resource-group-entries.ts";

/** How long a failed status write waits before the next try, by default. */
const defaultRetryMs = 5_000;
/** A pruned object still Terminating is read again after this long, then twice as long each time, up to the cap. */
const defaultHeldRecheckMs = 1_000;
const maxHeldRecheckMs = 30_000;

const noPrunes: PrunesInProgress = { pruned: [], lingering: [], held: [] };

/** A pruned object its finalizers still hold: its deletion sends no event (see #followHeld). */
const isHeld = (t: Tracked): boolean => t.strategy === "Delete" && t.health === HealthStatus.Terminating;

export interface ResourceGroupStatusOptions {
  readonly inventory: Inventory;
  readonly identity: SyncIdentity;
  /** The watch caches the remediator uses; without them (no watch cache) status changes only per pass. */
  readonly live?: InformerLiveState;
  /**
   * Finds the types of objects known from the stored group or a prune, not from a declaration (default:
   * its own, reading discovery through the watches' client when first needed).
   */
  readonly mapper?: RestMapper;
  readonly metrics?: Metrics;
  readonly log: Logger;
  /** True while a pass runs: it writes the status itself when it ends. */
  readonly passing: () => boolean;
  /** How long status changes gather before one write (default 1 s). */
  readonly debounceMs?: number;
  /** How long a failed status write waits before the next try (default 5 s). */
  readonly retryMs?: number;
  /** The first re-read of a pruned object still Terminating (default 1 s, doubling up to 30 s). */
  readonly heldRecheckMs?: number;
}

/**
 * The ResourceGroup's status, kept live between passes as Config Sync's ResourceGroup controller
 * keeps it: each pass records what it applied and what its prune left in the inventory, and watch
 * events on those objects (from the watch caches the remediator already has, no watch of its own)
 * update their kstatus. A restarted reconciler carries on from the stored status. Changes gather
 * for `debounceMs` and go out in one status write, only when something changed; a pass in progress
 * writes them when it ends.
 */
export class ResourceGroupStatus {
  readonly #options: ResourceGroupStatusOptions;
  readonly #inventoryId: string;
  #tracked = new Map<string, Tracked>();
  /** Passes recorded so far: a restore that began before one must not replace what it recorded. */
  #passes = 0;
  #mapper: RestMapper | undefined;
  #timer: NodeJS.Timeout | undefined;
  #heldTimer: NodeJS.Timeout | undefined;
  #heldDelayMs: number;
  #writing: Promise<void> = Promise.resolve();
  #stopped = false;
  /**
   * Objects whose watch told a change while a pass ran, by key: the event updated entries the pass is about
   * to replace with what it applied, so the pass's write reads them again instead of losing the change.
   */
  #changedDuringPass = new Map<string, ResourceMapping>();
  readonly #unsubscribe: (() => void)[] = [];
  readonly #restored: Promise<void>;

  constructor(options: ResourceGroupStatusOptions) {
    this.#options = options;
    this.#inventoryId = inventoryId(options.identity.namespace, options.identity.name);
    this.#mapper = options.mapper;
    this.#heldDelayMs = options.heldRecheckMs ?? defaultHeldRecheckMs;
    const live = options.live;
    if (live === undefined) {
      this.#restored = Promise.resolve();
      return;
    }
    // Objects a pass no longer declares (pruned, held by finalizers) are left out of the caches: their changes come here.
    this.#unsubscribe.push(
      live.onEvent((event, mapping, object) => this.#onEvent(event, mapping, object, true)),
      live.onUndeclared((mapping, object) => this.#onEvent("update", mapping, object, false)),
    );
    this.#restored = this.#restore(live).catch((error: unknown) => {
      if (this.#stopped) return; // the client closed under it at shutdown
      options.log.warn("ResourceGroup status: the stored status could not be read; the next pass rebuilds it", {
        error: String(error),
      });
    });
  }

  /**
   * After a pass's apply and prune: the entries of what it applied, and of what its prune left in the
   * inventory (strategy Delete), written with the group's conditions. Those in `timedOut` (idKeys) were
   * not Current within override.reconcileTimeout: reconcile Timeout, as Config Sync's applier records a
   * wait that ran out, until a watch event changes their kstatus.
   */
  async afterPass(
    applied: readonly ApplyOutcome[],
    commit: string,
    timedOut: ReadonlySet<string> = new Set(),
    prunes: PrunesInProgress = noPrunes,
  ): Promise<void> {
    this.#passes++;
    const previous = this.#tracked;
    const tracked = new Map<string, Tracked>();
    const hash = commitHash(commit);
    // Only conflicts and objects not Current may have more to say (the watch cache answers, in memory).
    const readLive: [Tracked, ApplyOutcome][] = [];
    for (const outcome of applied) {
      if (isManagementDisabled(outcome.desired.object)) continue; // not in the inventory
      const key = idKey(outcome.desired.id);
      const actuation = actuationOf(outcome);
      const health = outcome.health ?? HealthStatus.Unknown;
      const reconcile = reconcileOf(actuation, health, "Pending");
      const entry: Tracked = {
        ...untracked(outcome.desired.id, hash),
        actuation,
        health,
        reconcile: reconcile === "Pending" && timedOut.has(key) ? "Timeout" : reconcile,
      };
      tracked.set(key, entry);
      const conflict = outcome.error?.code === KnvCode.ManagementConflict;
      if (conflict || health !== HealthStatus.Current) readLive.push([entry, outcome]);
    }
    for (const { id, actuation, health } of pruneEntries(prunes)) {
      const key = idKey(id);
      const reconcile = reconcileOf(actuation, health, "Pending", "Delete");
      // What it was applied from: its object still carries that commit, not this one.
      const sourceHash = previous.get(key)?.sourceHash ?? "";
      tracked.set(key, { ...untracked(id, sourceHash), strategy: "Delete", actuation, health, reconcile });
    }
    for (const [entry, outcome] of readLive) {
      const live = await this.#liveCopy(outcome);
      if (outcome.error?.code === KnvCode.ManagementConflict)
        this.#setOwner(entry, this.#ownerOf(live), previous.get(idKey(entry.id)));
      entry.conditions = failureConditions(live, entry.id.group);
    }
    this.#tracked = tracked;
    await this.#catchUp(tracked);
    // What this tracks now is the inventory the prune left: the watches of every other undeclared type can go.
    this.#options.live?.unwatchUnused(Array.from(tracked.values(), (t) => t.id));
    this.#cancelTimer();
    this.#followHeld(true);
    await this.#write();
  }

  /**
   * An object written outside a pass (a drift correction): our own writes come back from the watch
   * silently (the informer drops their echo), so the writer tells. A re-created object is not NotFound.
   */
  observe(outcome: ApplyOutcome): void {
    const entry = this.#tracked.get(idKey(outcome.desired.id));
    const health = outcome.health;
    if (entry === undefined || outcome.error !== undefined || health === undefined || health === entry.health) return;
    entry.health = health;
    entry.reconcile = reconcileOf(entry.actuation, health, entry.reconcile, entry.strategy);
    if (health !== HealthStatus.Failed) entry.conditions = [];
    this.#schedule();
  }

  stop(): void {
    this.#stopped = true; // a write failing after this must not schedule another
    for (const unsubscribe of this.#unsubscribe) unsubscribe();
    this.#cancelTimer();
    if (this.#heldTimer !== undefined) clearTimeout(this.#heldTimer);
    this.#heldTimer = undefined;
  }

  /** Resolves once the stored status is read back and any write in progress is done (tests, shutdown). */
  async settled(): Promise<void> {
    await this.#restored;
    await this.#writing;
  }

  /**
   * A restarted reconciler carries on from the stored status: its entries are tracked again and the
   * watches of their types started, so they follow their objects before any pass gets to apply (one a
   * source error stops never does). Objects deleted while no reconciler ran send no event: each is
   * read once.
   */
  async #restore(live: InformerLiveState): Promise<void> {
    const passes = this.#passes;
    const { namespace, name } = this.#options.identity;
    const group = await live.client.get(resourceGroupMapping, namespace, name);
    // Before any list starts: the caches keep what the inventory records, not whatever forges the label.
    if (group !== undefined) {
      const ids = await Inventory.storedIds(live.client, this.#options.identity, group);
      if (passes === this.#passes && !this.#stopped) live.keepInventory(ids);
    }
    const stored = ((group?.["status"] ?? {}) as { resourceStatuses?: unknown }).resourceStatuses;
    if (passes !== this.#passes || this.#stopped || !Array.isArray(stored) || stored.length === 0) return;
    const tracked = new Map<string, Tracked>();
    for (const raw of stored as unknown[]) {
      const entry = restoredEntry(raw);
      if (entry !== undefined) tracked.set(idKey(entry.id), entry);
    }
    this.#tracked = tracked;
    const entries = [...tracked.values()];
    const mappings = await this.#mappingsOf(entries.map((e) => e.id));
    if (passes !== this.#passes || this.#stopped) return;
    live.prepare([...new Set(mappings.values())].filter((m): m is ResourceMapping => m !== undefined));
    await mapLimit(entries, 16, async (entry) => {
      if (passes !== this.#passes) return;
      const mapping = mappings.get(typeKey(entry.id));
      // Only objects this sync applied carry its label, and so sit in its watch caches: the rest are read.
      const cached = entry.strategy === "Apply" && entry.actuation === "Succeeded";
      await this.#reread(entry, mapping, cached);
    });
    this.#followHeld(true);
  }

  /** The mapping of each type among `ids` (undefined: not served, so none of its objects exist). */
  async #mappingsOf(ids: readonly ObjectId[]): Promise<Map<string, ResourceMapping | undefined>> {
    const live = this.#options.live;
    if (live === undefined) return new Map();
    this.#mapper ??= new RestMapper(live.client);
    const mapper = this.#mapper;
    const types = new Map<string, ObjectId>();
    for (const id of ids) types.set(typeKey(id), id);
    const mappings = new Map<string, ResourceMapping | undefined>();
    await mapLimit([...types], 8, async ([key, id]) => {
      mappings.set(key, await mapper.mappingForGroupKind(id.group, id.kind));
    });
    return mappings;
  }

  /** Reads an entry's object (from the watch cache, or the server) and takes in what changed; unreadable: as it was. */
  async #reread(entry: Tracked, mapping: ResourceMapping | undefined, cached: boolean): Promise<void> {
    const live = this.#options.live;
    if (live === undefined) return;
    let object: KubeObject | undefined;
    if (mapping !== undefined) {
      const namespace = mapping.namespaced ? entry.id.namespace : undefined;
      try {
        object = await (cached
          ? live.get(mapping, namespace, entry.id.name)
          : live.refresh(mapping, namespace, entry.id.name));
      } catch {
        return;
      }
    }
    if (this.#takeLive(entry, object)) this.#schedule();
  }

  /**
   * Pruned objects still Terminating: their deletion sends no event (the watch caches keep only declared
   * objects, and drop the deletion of any other), so each is read again, soon after the pass, then less
   * and less often while its finalizers hold it.
   */
  #followHeld(fromStart = false): void {
    if (fromStart) {
      if (this.#heldTimer !== undefined) clearTimeout(this.#heldTimer);
      this.#heldTimer = undefined;
      this.#heldDelayMs = this.#options.heldRecheckMs ?? defaultHeldRecheckMs;
    }
    if (this.#heldTimer !== undefined || this.#stopped || this.#options.live === undefined) return;
    if (![...this.#tracked.values()].some(isHeld)) return;
    this.#heldTimer = setTimeout(() => {
      this.#heldTimer = undefined;
      void this.#recheckHeld();
    }, this.#heldDelayMs);
    this.#heldTimer.unref();
    this.#heldDelayMs = Math.min(this.#heldDelayMs * 2, maxHeldRecheckMs);
  }

  async #recheckHeld(): Promise<void> {
    const held = [...this.#tracked.values()].filter(isHeld);
    const mappings = await this.#mappingsOf(held.map((e) => e.id)).catch(() => undefined);
    if (mappings !== undefined)
      await mapLimit(held, 8, (entry) => this.#reread(entry, mappings.get(typeKey(entry.id)), false));
    this.#followHeld();
  }

  /**
   * The live copy of an object a pass found held by another reconciler (KNV1060: owned by another
   * inventory), Failed, or a Config Connector resource not yet Current, so its entry says so from this
   * pass on. Objects the pass applied carry this group's id, which it just wrote or matched.
   */
  async #liveCopy(outcome: ApplyOutcome): Promise<KubeObject | undefined> {
    const { mapping, desired } = outcome;
    if (mapping === undefined) return undefined;
    return this.#options.live
      ?.get(mapping, mapping.namespaced ? desired.id.namespace : undefined, desired.id.name)
      .catch(() => undefined);
  }

  #ownerOf(object: KubeObject | undefined): string | undefined {
    const owner = object?.metadata.annotations?.[ManagedAnnotation.OwningInventory] ?? "";
    return owner === this.#inventoryId ? undefined : owner;
  }

  /** OwnershipOverlap for `owner`, keeping the time it was first seen while the owner stays the same. */
  #setOwner(entry: Tracked, owner: string | undefined, before: Tracked | undefined = entry): void {
    const same = before !== undefined && before.foreignOwner === owner && before.ownership !== undefined;
    entry.foreignOwner = owner;
    entry.ownership = same ? before.ownership : ownershipCondition(this.#inventoryId, owner, new Date());
  }

  /**
   * `declared`: told by the watch of a declared object (bounded by the declaration), not a labelled
   * undeclared one, which is noted during a pass only when tracked (a forged flood must not grow the notes).
   */
  #onEvent(event: "add" | "update" | "delete", mapping: ResourceMapping, object: KubeObject, declared: boolean): void {
    const namespace = mapping.namespaced ? (object.metadata.namespace ?? "") : "";
    const key = idKey({ group: mapping.group, kind: mapping.kind, namespace, name: object.metadata.name });
    const entry = this.#tracked.get(key);
    if ((declared || entry !== undefined) && this.#options.passing()) this.#changedDuringPass.set(key, mapping);
    if (entry !== undefined && this.#takeLive(entry, event === "delete" ? undefined : object)) this.#schedule();
  }

  /**
   * After a pass replaced the entries: those whose object changed while it ran take their live object again
   * (the pass's outcome may predate the change). Read from the watch cache while their type is watched at that
   * version; an object the caches leave out (pruned), or of a type no longer watched there, from the server.
   */
  async #catchUp(tracked: ReadonlyMap<string, Tracked>): Promise<void> {
    const changed = this.#changedDuringPass;
    this.#changedDuringPass = new Map();
    const live = this.#options.live;
    if (live === undefined || changed.size === 0) return;
    const watched = new Set(live.watchedTypes().map(mappingKey));
    const reads: [Tracked, ResourceMapping, boolean][] = [];
    for (const [key, mapping] of changed) {
      const entry = tracked.get(key);
      if (entry === undefined) continue;
      // As the restore reads them: only objects this sync applied carry its label, and so sit in its caches.
      const cached = entry.strategy === "Apply" && entry.actuation === "Succeeded" && watched.has(mappingKey(mapping));
      reads.push([entry, mapping, cached]);
    }
    await mapLimit(reads, 16, ([entry, mapping, cached]) => this.#reread(entry, mapping, cached));
  }

  /** An entry follows its live object (undefined: gone); true when that changed what it says. */
  #takeLive(entry: Tracked, live: KubeObject | undefined): boolean {
    const health = computeHealth(live);
    const foreignOwner = live === undefined ? entry.foreignOwner : this.#ownerOf(live);
    const conditions = failureConditions(live, entry.id.group);
    const sameConditions = JSON.stringify(conditions) === JSON.stringify(entry.conditions);
    if (health === entry.health && foreignOwner === entry.foreignOwner && sameConditions) return false;
    entry.health = health;
    entry.reconcile = reconcileOf(entry.actuation, health, entry.reconcile, entry.strategy);
    if (foreignOwner !== entry.foreignOwner) this.#setOwner(entry, foreignOwner);
    entry.conditions = conditions;
    return true;
  }

  #schedule(delayMs = this.#options.debounceMs ?? 1_000): void {
    if (this.#timer !== undefined || this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      // Not beside a running pass: one that applies writes these changes when it ends, and one that
      // stops early (an unchanged poll, a source error) leaves them to this timer's next round.
      if (this.#options.passing()) this.#schedule();
      else void this.#write();
    }, delayMs);
    this.#timer.unref();
  }

  #cancelTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** One write at a time: the inventory's knowledge of the stored group is not shared between two. */
  #write(): Promise<void> {
    this.#writing = this.#writing.then(async () => {
      const started = performance.now();
      const { inventory, metrics } = this.#options;
      const statuses = this.#entries();
      const conditions = groupConditions(statuses);
      try {
        await inventory.writeStatus(statuses, conditions);
      } catch (error) {
        if (isForbidden(error)) {
          // Rights withdrawn: the manager tears a deleted sync's reconciler down (its namespace terminating)
          // before the pod stops. Broken RBAC fails the pass's own inventory write, which reports it on status.
          this.#options.log.debug("ResourceGroup status write refused; left to the next pass", {
            error: String(error),
          });
          return;
        }
        // A 409 (the group changed meanwhile) succeeds on a fresh read; anything else retries slowly.
        this.#options.log.warn("ResourceGroup status write failed; retrying", { error: String(error) });
        this.#schedule(this.#options.retryMs ?? defaultRetryMs);
      }
      if (metrics === undefined) return;
      const stallreason = conditions.find((c) => c.type === "Stalled")?.reason ?? "";
      metrics.rgReconcileDuration.observe({ stallreason }, (performance.now() - started) / 1000);
      recordResourceGroupMetrics(metrics, this.#options.identity, statuses, inventory.sizeBytes);
    });
    return this.#writing;
  }

  #entries(): ResourceStatusEntry[] {
    return [...this.#tracked.values()].map(entryOf);
  }
}

/** A new entry for `id`, before what the pass did to it is filled in. */
function untracked(id: ObjectId, sourceHash: string): Omit<Tracked, "actuation" | "health" | "reconcile"> {
  return { id, sourceHash, strategy: "Apply", foreignOwner: undefined, ownership: undefined, conditions: [] };
}

function mappingKey(mapping: ResourceMapping): string {
  return `${mapping.group}/${mapping.version}/${mapping.resource}`;
}

function typeKey(id: ObjectId): string {
  return `${id.group}/${id.kind}`;
}
