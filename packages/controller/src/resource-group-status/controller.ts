/**
 * Config Sync's resource-group-controller for the ResourceGroups labelled as Config Sync's
 * (`app.kubernetes.io/managed-by: configmanagement.gke.io`) that no driftless reconciler keeps (one a user made, say): for each, status.resourceStatuses from the live objects it lists,
 * observedGeneration and the Reconciling/Stalled conditions, recomputed when the group or a listed
 * object changes. It runs in the leader manager; writes go through its fenced client.
 */
import { ManagedByValue, ManagedLabel, ResourceGroupStatusModeAnnotation, StatusMode } from "@driftless/api";
import { mapLimit, resourceGroupMapping } from "@driftless/applier";
import {
  Informer,
  isConflict,
  isNotFound,
  KubeApiError,
  type KubeClient,
  type KubeObject,
  RestMapper,
} from "@driftless/kube";
import type { ResourceGroupControllerMetrics } from "@driftless/metrics";
import { forgetGroupCounts, recordGroupCounts, type Logger } from "@driftless/sync";
import { isDeepStrictEqual } from "node:util";
import { KeyedLock } from "../keyed-lock.ts";
import {
  awaitsApplier,
  computeGroupStatus,
  objectKey,
  readObjects,
  type GroupStatus,
  type LiveRead,
} from "./group-status.ts";
import { KindWatches } from "./kind-watches.ts";
import { labelledSyncInventory } from "./sync-inventory.ts";

/** Config Sync's field manager for these status writes. */
const fieldManager = "configsync.gke.io/resource-group-controller";
/** Groups computed at once. */
const concurrency = 8;

export interface ResourceGroupStatusControllerOptions {
  /** The manager's fenced client: a write after leadership ends is refused. */
  readonly client: KubeClient;
  /** Whether a RootSync or RepoSync of this namespace and name exists: its reconciler writes this group. */
  readonly syncExists: (namespace: string, name: string) => boolean;
  readonly log: Logger;
  /** How long changes gather before the groups they touch are computed (default 200 ms). */
  readonly debounceMs?: number;
  /** After a failed status write (default 2 s). */
  readonly retryMs?: number;
  /** How long a read waits for a kind's first list (default 5 s). */
  readonly firstListWaitMs?: number;
  /** Config Sync's resource-group-controller metrics, per group kept. */
  readonly metrics?: ResourceGroupControllerMetrics;
}

export class ResourceGroupStatusController {
  readonly #o: ResourceGroupStatusControllerOptions;
  readonly #groups: Informer;
  readonly #watches: KindWatches;
  /** Listed object → groups listing it; kind → groups listing any of it. */
  readonly #byObject = new Map<string, Set<string>>();
  readonly #byKind = new Map<string, Set<string>>();
  /** Group → the object and kind keys it is indexed under. */
  readonly #indexed = new Map<string, { objects: string[]; kinds: string[] }>();
  readonly #pending = new Set<string>();
  /** Groups whose status this controller keeps (resource_group_total, and the groups with count series). */
  readonly #kept = new Set<string>();
  readonly #lock = new KeyedLock();
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #toldForbidden = false;

  constructor(options: ResourceGroupStatusControllerOptions) {
    this.#o = options;
    this.#watches = new KindWatches({
      client: options.client,
      mapper: new RestMapper(options.client),
      log: options.log,
      onObject: (group, kind, namespace, name) =>
        this.#scheduleAll(this.#byObject.get(objectKey({ group, kind, namespace, name }))),
      onKind: (group, kind) => this.#scheduleAll(this.#byKind.get(`${group}/${kind}`)),
      ...(options.firstListWaitMs === undefined ? {} : { firstListWaitMs: options.firstListWaitMs }),
    });
    // Config Sync's controller takes only the groups labelled as Config Sync's (OwnedByConfigSyncPredicate):
    // a `kpt live apply` group is kpt's to report. A reconciler's own group is cached as its labels only:
    // its spec and status can be megabytes.
    this.#groups = new Informer(options.client, resourceGroupMapping, {
      labelSelector: `${ManagedLabel.ManagedBy}=${ManagedByValue}`,
      transform: (group) => (labelledSyncInventory(group) ? { ...group, spec: undefined, status: undefined } : group),
      onError: (error) => {
        // A manager without the controller's ClusterRole (process mode on the reconciler-manager token) says how once.
        const forbidden = error instanceof KubeApiError && error.status === 403;
        options.log[forbidden && !this.#toldForbidden ? "warn" : "debug"](
          "ResourceGroup status: watch failed; retrying",
          {
            error: error.message,
            ...(forbidden
              ? {
                  hint: "bind the ClusterRole driftless:resource-group-controller, or pass --resource-group-controller=false",
                }
              : {}),
          },
        );
        if (forbidden) this.#toldForbidden = true;
      },
    });
    this.#groups.on("add", (group) => this.#observe(group));
    this.#groups.on("update", (group) => this.#observe(group));
    this.#groups.on("delete", (group) => this.#forget(keyOf(group)));
  }

  start(): void {
    this.#watches.start();
    this.#groups.start();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await Promise.all([this.#groups.stop(), this.#watches.stop()]);
  }

  /** A group added or changed (spec, status, labels): index what it lists, and compute it. */
  #observe(group: KubeObject): void {
    const key = keyOf(group);
    if (labelledSyncInventory(group)) {
      this.#forget(key);
      return;
    }
    const listed = readObjects(group);
    this.#unindex(key);
    const objects = listed.map(objectKey);
    const kinds = [...new Set(listed.map((o) => `${o.group}/${o.kind}`))];
    for (const o of objects) addTo(this.#byObject, o, key);
    for (const k of kinds) addTo(this.#byKind, k, key);
    this.#indexed.set(key, { objects, kinds });
    this.#watches.use(key, listed);
    this.#schedule(key);
  }

  #forget(key: string): void {
    this.#unindex(key);
    this.#watches.use(key, []);
    this.#pending.delete(key);
    this.#unkeep(key);
  }

  #keep(key: string, status: GroupStatus): void {
    const metrics = this.#o.metrics;
    if (metrics === undefined) return;
    this.#kept.add(key);
    metrics.resourceGroupTotal.set(this.#kept.size);
    recordGroupCounts(metrics, key, status.resourceStatuses ?? []);
  }

  #unkeep(key: string): void {
    const metrics = this.#o.metrics;
    if (metrics === undefined || !this.#kept.delete(key)) return;
    metrics.resourceGroupTotal.set(this.#kept.size);
    forgetGroupCounts(metrics, key);
  }

  #unindex(key: string): void {
    const indexed = this.#indexed.get(key);
    if (indexed === undefined) return;
    for (const o of indexed.objects) removeFrom(this.#byObject, o, key);
    for (const k of indexed.kinds) removeFrom(this.#byKind, k, key);
    this.#indexed.delete(key);
  }

  #scheduleAll(keys: ReadonlySet<string> | undefined): void {
    for (const key of keys ?? []) this.#schedule(key);
  }

  /** Changes gather for debounceMs, then every group they touched is computed once. */
  #schedule(key: string, delayMs = this.#o.debounceMs ?? 200): void {
    if (this.#stopped) return;
    this.#pending.add(key);
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      const keys = [...this.#pending];
      this.#pending.clear();
      // A computation that throws (no input known to) is logged and retried, never an unhandled rejection.
      void mapLimit(keys, concurrency, (k) =>
        this.#lock
          .run(k, () => this.#reconcile(k))
          .catch((error: unknown) => {
            this.#o.log.warn("ResourceGroup status: computing failed; retrying", { group: k, error: String(error) });
            this.#schedule(k, this.#o.retryMs ?? 2_000);
          }),
      );
    }, delayMs);
  }

  async #reconcile(key: string): Promise<void> {
    const [namespace = "", name = ""] = key.split("/");
    const group = this.#groups.get(namespace, name);
    if (this.#stopped || group === undefined || group.metadata.deletionTimestamp !== undefined) return;
    if (labelledSyncInventory(group) || this.#o.syncExists(namespace, name)) {
      this.#unkeep(key);
      return;
    }
    const timer = this.#o.metrics?.rgReconcileDuration.startTimer();
    const next = await this.#nextStatus(group);
    if (next === undefined || !("conditions" in next)) this.#unkeep(key);
    else this.#keep(key, next);
    if (next === undefined) return;
    if (!isDeepStrictEqual(group["status"] ?? {}, next)) await this.#write(key, group, next);
    // Config Sync labels the duration with the reason of the group's Stalled condition.
    timer?.({ stallreason: stalledReason(next) });
  }

  async #write(key: string, group: KubeObject, status: GroupStatus | DisabledStatus): Promise<void> {
    try {
      await this.#o.client.replaceStatus(resourceGroupMapping, { ...group, status }, { fieldManager });
    } catch (error) {
      if (this.#stopped || isNotFound(error)) return;
      // A conflict: the newer version's watch event schedules it again; anything else is retried.
      if (isConflict(error)) return;
      this.#o.log.warn("ResourceGroup status: status write failed; retrying", { group: key, error: String(error) });
      this.#schedule(key, this.#o.retryMs ?? 2_000);
    }
  }

  /**
   * The status to hold: Config Sync's empty status for a group whose status is disabled, none while the
   * group's applier has not recorded its spec, else the computed one.
   */
  async #nextStatus(group: KubeObject): Promise<GroupStatus | DisabledStatus | undefined> {
    if (group.metadata.annotations?.[ResourceGroupStatusModeAnnotation] === StatusMode.Disabled)
      return group["status"] === undefined ? undefined : { observedGeneration: 0 };
    if (awaitsApplier(group)) return undefined;
    const reads = new Map<string, LiveRead>();
    for (const object of readObjects(group)) {
      const read = await this.#watches.read(object);
      if (read.state === "unreadable")
        this.#o.log.debug("ResourceGroup status: object unreadable, reported Unknown", {
          object: objectKey(object),
          why: read.why,
        });
      reads.set(objectKey(object), read);
    }
    return computeGroupStatus(group, (o) => reads.get(objectKey(o)) ?? { state: "absent" }, new Date());
  }
}

/** Config Sync's empty status of a group whose status is disabled. */
interface DisabledStatus {
  readonly observedGeneration: 0;
}

function stalledReason(status: GroupStatus | DisabledStatus): string {
  if (!("conditions" in status)) return "";
  return status.conditions?.find((c) => c.type === "Stalled")?.reason ?? "";
}

function keyOf(group: KubeObject): string {
  return `${group.metadata.namespace ?? ""}/${group.metadata.name}`;
}

function addTo(index: Map<string, Set<string>>, key: string, value: string): void {
  const set = index.get(key) ?? new Set<string>();
  set.add(value);
  index.set(key, set);
}

function removeFrom(index: Map<string, Set<string>>, key: string, value: string): void {
  const set = index.get(key);
  if (set === undefined) return;
  set.delete(value);
  if (set.size === 0) index.delete(key);
}
