import { KnvCode, ManagedAnnotation, inventoryId, sourceHash as commitHash } from "@driftless/api";
import {
  computeHealth,
  failureConditions,
  groupConditions,
  idKey,
  isManagementDisabled,
  Operation,
  ownershipCondition,
  reconcileOf,
  reportedStatus,
  type Actuation,
  type GroupCondition,
  type ApplyOutcome,
  type HealthStatus,
  type Inventory,
  type ObjectId,
  type Reconcile,
  type ResourceStatusEntry,
  type SyncIdentity,
} from "@driftless/applier";
import { isForbidden, type KubeObject, type ResourceMapping } from "@driftless/kube";
import type { Metrics } from "@driftless/metrics";
import type { InformerLiveState } from "./live-cache.ts";
import type { Logger } from "./log.ts";
import { recordResourceGroupMetrics } from "./resource-group-metrics.ts";

/** How long a failed status write waits before the next try, by default. */
const defaultRetryMs = 5_000;

/** What is known of one inventoried object between passes. */
interface Tracked {
  readonly id: ObjectId;
  readonly sourceHash: string;
  readonly actuation: Actuation;
  health: HealthStatus;
  reconcile: Reconcile;
  /** The live `config.k8s.io/owning-inventory`, when it is not this group's. */
  foreignOwner: string | undefined;
  /** What a Failed object says of its failure (its Stalled conditions). */
  failure: readonly GroupCondition[] | undefined;
}

export interface ResourceGroupStatusOptions {
  readonly inventory: Inventory;
  readonly identity: SyncIdentity;
  /** The watch caches the remediator uses; without them (no watch cache) status changes only per pass. */
  readonly live?: InformerLiveState;
  readonly metrics?: Metrics;
  readonly log: Logger;
  /** True while a pass runs: it writes the status itself when it ends. */
  readonly passing: () => boolean;
  /** How long status changes gather before one write (default 1 s). */
  readonly debounceMs?: number;
  /** How long a failed status write waits before the next try (default 5 s). */
  readonly retryMs?: number;
}

/**
 * The ResourceGroup's status, kept live between passes as Config Sync's ResourceGroup controller
 * keeps it: each pass records what it applied, and watch events on those objects (from the watch
 * caches the remediator already has, no watch of its own) update their kstatus. Changes gather for
 * `debounceMs` and go out in one status write, only when something changed; a pass in progress
 * writes them when it ends.
 */
export class ResourceGroupStatus {
  readonly #options: ResourceGroupStatusOptions;
  readonly #inventoryId: string;
  #tracked = new Map<string, Tracked>();
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> = Promise.resolve();
  #stopped = false;
  readonly #unsubscribe: (() => void) | undefined;

  constructor(options: ResourceGroupStatusOptions) {
    this.#options = options;
    this.#inventoryId = inventoryId(options.identity.namespace, options.identity.name);
    this.#unsubscribe = options.live?.onEvent((event, mapping, object) => this.#onEvent(event, mapping, object));
  }

  /**
   * After a pass's apply: the entries of what it applied, written with the group's conditions. Those in
   * `timedOut` (idKeys) were not Current within override.reconcileTimeout: reconcile Timeout, as Config
   * Sync's applier records a wait that ran out, until a watch event changes their kstatus.
   */
  async afterPass(
    applied: readonly ApplyOutcome[],
    commit: string,
    timedOut: ReadonlySet<string> = new Set(),
  ): Promise<void> {
    const tracked = new Map<string, Tracked>();
    const hash = commitHash(commit);
    // Conflicts and failures are rare: only they need the live copy (from the watch cache).
    const readLive: [Tracked, ApplyOutcome][] = [];
    for (const outcome of applied) {
      if (isManagementDisabled(outcome.desired.object)) continue; // not in the inventory
      const actuation: Actuation =
        outcome.operation === Operation.Skipped ? "Skipped" : outcome.error !== undefined ? "Failed" : "Succeeded";
      const health = outcome.health ?? "Unknown";
      const reconcile = reconcileOf(actuation, health, "Pending");
      const entry: Tracked = {
        id: outcome.desired.id,
        sourceHash: hash,
        actuation,
        health,
        reconcile: reconcile === "Pending" && timedOut.has(idKey(outcome.desired.id)) ? "Timeout" : reconcile,
        foreignOwner: undefined,
        failure: undefined,
      };
      tracked.set(idKey(outcome.desired.id), entry);
      if (outcome.error?.code === KnvCode.ManagementConflict || health === "Failed") readLive.push([entry, outcome]);
    }
    for (const [entry, outcome] of readLive) {
      const live = await this.#liveCopy(outcome);
      if (outcome.error?.code === KnvCode.ManagementConflict) entry.foreignOwner = this.#ownerOf(live);
      if (entry.health === "Failed") entry.failure = failureConditions(live);
    }
    this.#tracked = tracked;
    this.#cancelTimer();
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
    entry.reconcile = reconcileOf(entry.actuation, health, entry.reconcile);
    if (health !== "Failed") entry.failure = undefined;
    this.#schedule();
  }

  stop(): void {
    this.#stopped = true; // a write failing after this must not schedule another
    this.#unsubscribe?.();
    this.#cancelTimer();
  }

  /** Resolves once any write in progress is done (tests, shutdown). */
  settled(): Promise<void> {
    return this.#writing;
  }

  /**
   * The live copy of an object a pass found held by another reconciler (KNV1060: owned by another
   * inventory) or Failed, so its entry says so from this pass on. Objects the pass applied carry this
   * group's id, which it just wrote or matched.
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

  #onEvent(event: "add" | "update" | "delete", mapping: ResourceMapping, object: KubeObject): void {
    if (this.#tracked.size === 0) return;
    const namespace = mapping.namespaced ? (object.metadata.namespace ?? "") : "";
    const key = idKey({ group: mapping.group, kind: mapping.kind, namespace, name: object.metadata.name });
    const entry = this.#tracked.get(key);
    if (entry === undefined) return;
    const live = event === "delete" ? undefined : object;
    const health = computeHealth(live);
    const foreignOwner = live === undefined ? entry.foreignOwner : this.#ownerOf(live);
    const failure = health === "Failed" ? failureConditions(live) : undefined;
    const sameFailure = JSON.stringify(failure) === JSON.stringify(entry.failure); // both undefined unless Failed
    if (health === entry.health && foreignOwner === entry.foreignOwner && sameFailure) return;
    entry.health = health;
    entry.reconcile = reconcileOf(entry.actuation, health, entry.reconcile);
    entry.foreignOwner = foreignOwner;
    entry.failure = failure;
    this.#schedule();
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
    const out: ResourceStatusEntry[] = [];
    for (const t of this.#tracked.values()) {
      const ownership =
        t.foreignOwner === undefined ? undefined : ownershipCondition(this.#inventoryId, t.foreignOwner);
      const conditions = ownership === undefined ? (t.failure ?? []) : [...(t.failure ?? []), ownership];
      out.push({
        group: t.id.group,
        kind: t.id.kind,
        namespace: t.id.namespace ?? "",
        name: t.id.name,
        status: reportedStatus(t.actuation, t.health),
        sourceHash: t.sourceHash,
        strategy: "Apply",
        actuation: t.actuation,
        reconcile: t.reconcile,
        ...(conditions.length === 0 ? {} : { conditions }),
      });
    }
    return out;
  }
}
