import { kubeTime } from "@driftless/api";
import type { JsonObject } from "./desired.ts";
import { computeStatus, HealthStatus } from "./kstatus.ts";
import type { ObjectId } from "./object-id.ts";

/** A condition of the ResourceGroup or of one of its resourceStatuses. */
export interface GroupCondition {
  readonly type: string;
  readonly status: "True" | "False" | "Unknown";
  readonly reason?: string;
  readonly message?: string;
  readonly lastTransitionTime?: string;
}

export type Actuation = "Pending" | "Succeeded" | "Skipped" | "Failed";
/** Timeout: the pass's wait for it to become Current ran out (override.reconcileTimeout), as Config Sync's applier records it. */
export type Reconcile = "Pending" | "Succeeded" | "Skipped" | "Timeout" | "Failed";

/** One entry of ResourceGroup status.resourceStatuses. */
export interface ResourceStatusEntry extends ObjectId {
  readonly status: string;
  readonly sourceHash?: string;
  readonly strategy: "Apply" | "Delete";
  readonly actuation: Actuation;
  readonly reconcile: Reconcile;
  readonly conditions?: readonly GroupCondition[];
}

const componentFailedPrefix = "The following components failed:";

/** Condition types and reasons Config Sync's ResourceGroup controller writes. */
export const GroupConditionType = {
  Reconciling: "Reconciling",
  Stalled: "Stalled",
  /** On a resourceStatuses entry whose object another inventory owns. */
  OwnershipOverlap: "OwnershipOverlap",
} as const;

/**
 * The `status` an entry reports: the object's kstatus once its declaration was applied; while it was
 * not (skipped, failed), the live status says nothing about the declaration, so it is Unknown unless
 * the object is gone or going (as Config Sync's controller reports it).
 */
export function reportedStatus(actuation: Actuation, health: HealthStatus): HealthStatus {
  if (actuation === "Succeeded" || health === "NotFound" || health === "Terminating") return health;
  return "Unknown";
}

/** How an entry's object is actuated: applied from the source, or deleted because it left it. */
export type Strategy = ResourceStatusEntry["strategy"];

/**
 * `reconcile` of an entry from its live kstatus, Config Sync's rules: an applied object is Succeeded once
 * Current and Failed when it vanished; a deleted one is Pending while Terminating, Succeeded once NotFound
 * and Failed when it is back. Unknown keeps what was known.
 */
export function reconcileOf(
  actuation: Actuation,
  health: HealthStatus,
  previous: Reconcile,
  strategy: Strategy = "Apply",
): Reconcile {
  if (actuation === "Pending") return "Pending";
  if (actuation !== "Succeeded") return "Skipped";
  if (health === HealthStatus.Unknown) return previous;
  if (strategy === "Delete") {
    if (health === HealthStatus.NotFound) return "Succeeded";
    return health === HealthStatus.Terminating ? "Pending" : "Failed";
  }
  if (health === HealthStatus.Current) return "Succeeded";
  return health === HealthStatus.InProgress ? "Pending" : "Failed";
}

/**
 * OwnershipOverlap when the live object's `config.k8s.io/owning-inventory` is not this group's
 * inventory id: True (reason Overlap) when another inventory owns it, Unknown when none does, dated
 * `since` (Config Sync dates it; the caller keeps the first time while the owner stays the same).
 * The messages are Config Sync's, word for word: its users and tests match on them.
 */
export function ownershipCondition(
  inventoryId: string,
  owner: string | undefined,
  since: Date,
): GroupCondition | undefined {
  if (owner === inventoryId) return undefined;
  // Whole seconds, as Config Sync's metav1.Time marshals (RFC 3339).
  const lastTransitionTime = kubeTime(since);
  if (owner !== undefined && owner !== "") {
    return {
      type: GroupConditionType.OwnershipOverlap,
      status: "True",
      reason: "Overlap",
      message:
        `This resource is owned by another ResourceGroup ${owner}. ` +
        `The status only reflects the specification for the current object in ResourceGroup ${owner}.`,
      lastTransitionTime,
    };
  }
  return {
    type: GroupConditionType.OwnershipOverlap,
    status: "Unknown",
    reason: "Unknown",
    message:
      "This object is not owned by any inventory object. " +
      "The status for the current object may not reflect the specification for it in current ResourceGroup.",
    lastTransitionTime,
  };
}

/** Config Connector's API groups (`*.cnrm.cloud.google.com`): their resources report no Stalled condition. */
const configConnectorGroupSuffix = "cnrm.cloud.google.com";

/**
 * The conditions copied onto an object's entry, as Config Sync's controller copies them: kstatus's for a
 * Failed object (its own Stalled condition, or the one kstatus reads from its kind: a Deployment past
 * its progress deadline, a failed Job), and for a Config Connector resource that is not Current its own
 * status.conditions (kstatus's when it has none). The object's transition times are kept where it has
 * them, so an unchanged object is an unchanged status; [] for anything else, or a gone object.
 */
export function failureConditions(live: JsonObject | undefined, group = ""): GroupCondition[] {
  if (live === undefined) return [];
  const health = computeStatus(live);
  if (health.status === HealthStatus.Failed) return health.conditions.map(copiedCondition);
  if (health.status === HealthStatus.Current || !group.endsWith(configConnectorGroupSuffix)) return [];
  return ownConditions(live) ?? health.conditions.map(copiedCondition);
}

/** The object's status.conditions that a ResourceGroup may hold (type and status set); undefined without a list. */
function ownConditions(live: JsonObject): GroupCondition[] | undefined {
  const status = live["status"];
  const listed = typeof status === "object" && status !== null ? (status as JsonObject)["conditions"] : undefined;
  if (!Array.isArray(listed)) return undefined;
  const conditions: GroupCondition[] = [];
  for (const item of listed as unknown[]) {
    if (typeof item !== "object" || item === null) continue;
    const { type, status: value, reason, message, lastTransitionTime } = item as Record<string, unknown>;
    // The ResourceGroup CRD requires type and status: one without would fail the whole status write.
    if (typeof type !== "string" || type === "" || typeof value !== "string") continue;
    conditions.push(
      copiedCondition({
        type,
        status: value === "True" || value === "False" ? value : "Unknown",
        reason: typeof reason === "string" ? reason : "",
        message: typeof message === "string" ? message : "",
        ...(typeof lastTransitionTime === "string" ? { lastTransitionTime } : {}),
      }),
    );
  }
  return conditions;
}

/**
 * A condition as an entry holds it: empty strings left out, as Config Sync's omitempty fields are, and a
 * transition time only in the CRD's `date-time` format (anything else would fail the whole status write).
 */
function copiedCondition(c: {
  readonly type: string;
  readonly status: GroupCondition["status"];
  readonly reason: string;
  readonly message: string;
  readonly lastTransitionTime?: string | undefined;
}): GroupCondition {
  return {
    type: c.type,
    status: c.status,
    ...(c.reason === "" ? {} : { reason: c.reason }),
    ...(c.message === "" ? {} : { message: c.message }),
    ...(c.lastTransitionTime !== undefined && isDateTime(c.lastTransitionTime)
      ? { lastTransitionTime: c.lastTransitionTime }
      : {}),
  };
}

/** RFC 3339, as the API server's `date-time` format reads it. */
function isDateTime(text: string): boolean {
  return (
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(text) && !Number.isNaN(Date.parse(text))
  );
}

/**
 * The group's conditions from its entries: Reconciling False (status is computed continuously, as
 * Config Sync's controller always reports it), Stalled True naming every Failed object, else False.
 * The Stalled message is Config Sync's, its list joined to the prefix without a space.
 */
export function groupConditions(
  statuses: readonly Pick<ResourceStatusEntry, "status" | "group" | "kind" | "namespace" | "name">[],
): GroupCondition[] {
  const failed = statuses
    .filter((s) => s.status === "Failed")
    .map((s) => `${s.group}/${s.kind}/${s.namespace ?? ""}/${s.name}`);
  const finish = { reason: "FinishReconciling", message: "finish reconciling" } as const;
  return [
    { type: GroupConditionType.Reconciling, status: "False", ...finish },
    failed.length > 0
      ? {
          type: GroupConditionType.Stalled,
          status: "True",
          reason: "ComponentFailed",
          message: `${componentFailedPrefix}${failed.join(", ")}`,
        }
      : { type: GroupConditionType.Stalled, status: "False", ...finish },
  ];
}

/**
 * `next` laid over `previous` by type, each keeping its lastTransitionTime unless it changed (so an
 * unchanged status is an equal status, and no write); Reconciling first, Stalled second, the rest by
 * type, the order `kubectl get resourcegroup`'s columns read.
 */
export function mergeConditions(
  previous: readonly GroupCondition[],
  next: readonly GroupCondition[],
  now: Date,
): GroupCondition[] {
  const byType = new Map(previous.map((c) => [c.type, c]));
  for (const condition of next) {
    const old = byType.get(condition.type);
    const same =
      old !== undefined &&
      old.status === condition.status &&
      old.reason === condition.reason &&
      old.message === condition.message;
    byType.set(condition.type, same ? old : { ...condition, lastTransitionTime: kubeTime(now) });
  }
  const rank = (type: string): number =>
    type === GroupConditionType.Reconciling ? 0 : type === GroupConditionType.Stalled ? 1 : 2;
  return [...byType.values()].sort((a, b) => rank(a.type) - rank(b.type) || (a.type < b.type ? -1 : 1));
}
