/**
 * The status Config Sync's resource-group-controller writes on a ResourceGroup, computed from its spec,
 * its stored status and what the cluster holds of each listed object: one pure function, so the shape
 * (omitempty fields, condition reasons and messages, kept transition times) is tested without a cluster.
 */
import { ManagedAnnotation, InventoryIdLabel, sourceHash, type ResourceGroupCondition } from "@driftless/api";
import {
  computeHealth,
  failureConditions,
  groupConditions,
  HealthStatus,
  mergeConditions,
  ownershipCondition,
  reconcileOf,
  reportedStatus,
  type Actuation,
  type Reconcile,
} from "@driftless/applier";
import type { KubeObject } from "@driftless/kube";

/** One listed object: group, kind, namespace ("" when cluster-scoped) and name, as spec.resources holds it. */
export interface ListedObject {
  readonly group: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

/** What the cluster says of a listed object. */
export type LiveRead =
  | { readonly state: "found"; readonly object: KubeObject }
  /** The object, or its type (no CRD serves the kind), is not there. */
  | { readonly state: "absent" }
  /** Could not be read (forbidden, the watch not listed yet): kstatus Unknown, as Config Sync reports a failed GET. */
  | { readonly state: "unreadable"; readonly why: string };

/** A status.resourceStatuses entry, fields in Config Sync's order; empty ones are left out as its omitempty tags do. */
export interface EntryStatus extends ListedObject {
  readonly status: string;
  readonly sourceHash?: string;
  readonly conditions?: readonly ResourceGroupCondition[];
  readonly strategy?: string;
  readonly actuation?: string;
  readonly reconcile?: string;
}

export interface SubgroupStatus {
  readonly namespace: string;
  readonly name: string;
  readonly status: string;
  readonly conditions?: readonly ResourceGroupCondition[];
}

export interface GroupStatus {
  readonly observedGeneration: number;
  readonly resourceStatuses?: readonly EntryStatus[];
  readonly subgroupStatuses?: readonly SubgroupStatus[];
  readonly conditions?: readonly ResourceGroupCondition[];
}

/** A subgroup is a ResourceGroup listed by namespace and name; its status is that group's kstatus. */
export const subgroupKind = { group: "kpt.dev", kind: "ResourceGroup" } as const;

/** The ResourceGroup fields this reads, parsed leniently (a user's group may hold anything the CRD lets through). */
interface GroupView {
  readonly generation: number;
  readonly inventoryId: string;
  readonly resources: readonly ListedObject[];
  readonly subgroups: readonly { readonly namespace: string; readonly name: string }[];
  readonly previous: Partial<GroupStatus>;
}

export function listedObjects(group: KubeObject): readonly ListedObject[] {
  return viewOf(group).resources;
}

/** Every object the group's status reads: spec.resources, then its subgroups as ResourceGroups. */
export function readObjects(group: KubeObject): readonly ListedObject[] {
  const view = viewOf(group);
  return [...view.resources, ...view.subgroups.map((g) => ({ ...subgroupKind, ...g }))];
}

/**
 * Config Sync computes a group's status only once its applier has recorded the spec
 * (status.observedGeneration = metadata.generation): a write before that would make the applier's own
 * status write fail on a conflict.
 */
export function awaitsApplier(group: KubeObject): boolean {
  return viewOf(group).previous.observedGeneration !== group.metadata.generation;
}

/**
 * The group's status: an entry per listed object (kstatus, source hash, Config Sync's failure and ownership
 * conditions, the applier's strategy/actuation/reconcile kept and reconcile recomputed), one per subgroup,
 * observedGeneration, and Reconciling False / Stalled (True naming every Failed object). Conditions whose
 * type, status, reason and message are unchanged keep their lastTransitionTime, so an unchanged cluster
 * computes an equal status.
 */
export function computeGroupStatus(
  group: KubeObject,
  read: (object: ListedObject) => LiveRead,
  now: Date,
): GroupStatus {
  const view = viewOf(group);
  const previousEntries = new Map((view.previous.resourceStatuses ?? []).map((e) => [objectKey(e), e]));
  const entryOf = (listed: ListedObject): EntryStatus =>
    withActuation(observedEntry(listed, read(listed), view.inventoryId, now), previousEntries.get(objectKey(listed)));
  const resourceStatuses = view.resources.map(entryOf);
  const subgroupStatuses = view.subgroups.map((g): SubgroupStatus => {
    const { status, conditions } = entryOf({ ...subgroupKind, ...g });
    return { namespace: g.namespace, name: g.name, status, ...(conditions === undefined ? {} : { conditions }) };
  });
  const conditions = mergeConditions(view.previous.conditions ?? [], groupConditions(resourceStatuses), now);
  return {
    observedGeneration: view.generation,
    ...(resourceStatuses.length > 0 ? { resourceStatuses } : {}),
    ...(subgroupStatuses.length > 0 ? { subgroupStatuses } : {}),
    conditions,
  };
}

/** An entry from the live object alone (no applier fields yet). */
function observedEntry(listed: ListedObject, live: LiveRead, inventoryId: string, now: Date): EntryStatus {
  const id = { namespace: listed.namespace, name: listed.name, group: listed.group, kind: listed.kind };
  if (live.state === "absent") return { ...id, status: HealthStatus.NotFound };
  if (live.state === "unreadable") return { ...id, status: HealthStatus.Unknown };
  const annotations = live.object.metadata.annotations ?? {};
  const hash = sourceHash(annotations[ManagedAnnotation.Token] ?? "");
  // Config Sync compares the group's inventory-id label with the object's owning-inventory, "" for either absent.
  const owner = ownershipCondition(inventoryId, annotations[ManagedAnnotation.OwningInventory] ?? "", now);
  const conditions = [...failureConditions(live.object, listed.group), ...(owner === undefined ? [] : [owner])];
  return {
    ...id,
    status: computeHealth(live.object),
    ...(hash === "" ? {} : { sourceHash: hash }),
    ...(conditions.length > 0 ? { conditions } : {}),
  };
}

const strategies = new Set(["Apply", "Delete"]);
const actuations = new Set<string>(["Pending", "Succeeded", "Skipped", "Failed"]);

/**
 * The applier's fields of the stored entry carried over, as Config Sync keeps "the existing object statuses
 * written by cli-utils": reconcile follows the new kstatus (kept when strategy or actuation is not one it
 * knows), and status is Unknown while the declaration was not actuated (unless the object is gone or going).
 * Conditions equal to stored ones keep their time.
 */
function withActuation(entry: EntryStatus, stored: EntryStatus | undefined): EntryStatus {
  const conditions = keptTimes(entry.conditions, stored?.conditions);
  const base = { ...entry, ...(conditions === undefined ? {} : { conditions }) };
  if (stored === undefined) return base;
  const { strategy, actuation, reconcile } = stored;
  let nextReconcile = reconcile;
  if (strategy !== undefined && strategies.has(strategy) && actuation !== undefined && actuations.has(actuation))
    nextReconcile = reconcileOf(
      actuation as Actuation,
      entry.status as HealthStatus,
      (reconcile ?? "") as Reconcile,
      strategy as "Apply" | "Delete",
    );
  const status =
    actuation === undefined || actuation === ""
      ? entry.status
      : reportedStatus(actuation as Actuation, entry.status as HealthStatus);
  return {
    ...base,
    status,
    ...(strategy ? { strategy } : {}),
    ...(actuation ? { actuation } : {}),
    ...(nextReconcile ? { reconcile: nextReconcile } : {}),
  };
}

/** `next` with each condition equal to a stored one (type, status, reason, message) dated as that one. */
function keptTimes(
  next: readonly ResourceGroupCondition[] | undefined,
  stored: readonly ResourceGroupCondition[] | undefined,
): readonly ResourceGroupCondition[] | undefined {
  if (next === undefined || stored === undefined) return next;
  return next.map((c) => {
    const same = stored.find(
      (s) => s.type === c.type && s.status === c.status && s.reason === c.reason && s.message === c.message,
    );
    return same?.lastTransitionTime === undefined ? c : { ...c, lastTransitionTime: same.lastTransitionTime };
  });
}

export function objectKey(o: ListedObject): string {
  return `${o.group}/${o.kind}/${o.namespace}/${o.name}`;
}

function viewOf(group: KubeObject): GroupView {
  const spec = asRecord(group["spec"]);
  const status = asRecord(group["status"]);
  const text = (v: unknown): string => (typeof v === "string" ? v : "");
  const records = (v: unknown): Record<string, unknown>[] =>
    Array.isArray(v)
      ? v.flatMap((item) => (asRecord(item) === undefined ? [] : [item as Record<string, unknown>]))
      : [];
  const listed = (r: Record<string, unknown>): ListedObject => ({
    group: text(r["group"]),
    kind: text(r["kind"]),
    namespace: text(r["namespace"]),
    name: text(r["name"]),
  });
  const observed = status?.["observedGeneration"];
  return {
    generation: group.metadata.generation ?? 0,
    inventoryId: group.metadata.labels?.[InventoryIdLabel] ?? "",
    resources: records(spec?.["resources"]).map(listed),
    subgroups: records(spec?.["subgroups"]).map((r) => ({ namespace: text(r["namespace"]), name: text(r["name"]) })),
    previous: {
      ...(typeof observed === "number" ? { observedGeneration: observed } : { observedGeneration: 0 }),
      resourceStatuses: records(status?.["resourceStatuses"]).map((r) => r as unknown as EntryStatus),
      conditions: records(status?.["conditions"]).map((r) => r as unknown as ResourceGroupCondition),
    },
  };
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
