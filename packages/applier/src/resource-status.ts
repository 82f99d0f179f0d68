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

/** `reconcile` of an applied entry from its live kstatus (Config Sync's rule: a vanished object is Failed). */
export function reconcileOf(actuation: Actuation, health: HealthStatus, previous: Reconcile): Reconcile {
  if (actuation === "Pending") return "Pending";
  if (actuation !== "Succeeded") return "Skipped";
  switch (health) {
    case "Current":
      return "Succeeded";
    case "InProgress":
      return "Pending";
    case "Unknown":
      return previous;
    default:
      return "Failed";
  }
}

/**
 * OwnershipOverlap when the live object's `config.k8s.io/owning-inventory` is not this group's
 * inventory id: True (reason Overlap) when another inventory owns it, Unknown when none does.
 * The messages are Config Sync's, word for word: its users and tests match on them.
 */
export function ownershipCondition(inventoryId: string, owner: string | undefined): GroupCondition | undefined {
  if (owner === inventoryId) return undefined;
  if (owner !== undefined && owner !== "") {
    return {
      type: GroupConditionType.OwnershipOverlap,
      status: "True",
      reason: "Overlap",
      message:
        `This resource is owned by another ResourceGroup ${owner}. ` +
        `The status only reflects the specification for the current object in ResourceGroup ${owner}.`,
    };
  }
  return {
    type: GroupConditionType.OwnershipOverlap,
    status: "Unknown",
    reason: "Unknown",
    message:
      "This object is not owned by any inventory object. " +
      "The status for the current object may not reflect the specification for it in current ResourceGroup.",
  };
}

/**
 * The condition kstatus gives a Failed object for failing (its own Stalled condition, or the one
 * kstatus reads from its kind: a Deployment past its progress deadline, a failed Job), copied onto its
 * entry as Config Sync's controller does. The object's transition time is kept where it has one, so
 * an unchanged failure is an unchanged status; [] when the object is not Failed.
 */
export function failureConditions(live: JsonObject | undefined): GroupCondition[] {
  const health = computeStatus(live);
  if (health.status !== HealthStatus.Failed) return [];
  // Empty strings are left out, as Config Sync's omitempty fields are.
  return health.conditions.map((c) => ({
    type: c.type,
    status: c.status,
    ...(c.reason === "" ? {} : { reason: c.reason }),
    ...(c.message === "" ? {} : { message: c.message }),
    ...(c.lastTransitionTime === undefined ? {} : { lastTransitionTime: c.lastTransitionTime }),
  }));
}

/**
 * The group's conditions from its entries: Reconciling False (status is computed continuously, as
 * Config Sync's controller always reports it), Stalled True naming every Failed object, else False.
 * The Stalled message is Config Sync's, its list joined to the prefix without a space.
 */
export function groupConditions(statuses: readonly ResourceStatusEntry[]): GroupCondition[] {
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
    byType.set(condition.type, same ? old : { ...condition, lastTransitionTime: now.toISOString() });
  }
  const rank = (type: string): number =>
    type === GroupConditionType.Reconciling ? 0 : type === GroupConditionType.Stalled ? 1 : 2;
  return [...byType.values()].sort((a, b) => rank(a.type) - rank(b.type) || (a.type < b.type ? -1 : 1));
}
