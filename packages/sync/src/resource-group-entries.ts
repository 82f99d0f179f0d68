/**
 * One object's entry in the ResourceGroup's status.resourceStatuses, as ResourceGroupStatus keeps it
 * between writes: what the last pass did to the object (strategy, actuation) and what its watch says
 * of it since (health, reconcile, conditions).
 */
import { KnvCode } from "@driftless/api";
import {
  GroupConditionType,
  HealthStatus,
  Operation,
  PruneOperation,
  reconcileOf,
  reportedStatus,
  type Actuation,
  type ApplyOutcome,
  type GroupCondition,
  type ObjectId,
  type PruneOutcome,
  type Reconcile,
  type ResourceStatusEntry,
} from "@driftless/applier";

export type Strategy = ResourceStatusEntry["strategy"];

export interface Tracked {
  readonly id: ObjectId;
  /** The commit the object was last applied from ("" when not known: left out of the entry). */
  readonly sourceHash: string;
  readonly strategy: Strategy;
  readonly actuation: Actuation;
  health: HealthStatus;
  reconcile: Reconcile;
  /** The live `config.k8s.io/owning-inventory`, when it is not this group's ("" when none is set). */
  foreignOwner: string | undefined;
  /** OwnershipOverlap for foreignOwner, dated when that owner was first seen. */
  ownership: GroupCondition | undefined;
  /** What the object says of itself (its Stalled conditions when Failed, a Config Connector resource's own). */
  conditions: readonly GroupCondition[];
}

/**
 * How an apply is reported, as Config Sync's applier reports it: an apply that did not run (a dependency
 * not ready, `managed: disabled`) or that another inventory's ownership blocked (KNV1060, cli-utils'
 * ApplySkipped) is Skipped; one the server refused is Failed.
 */
export function actuationOf(outcome: ApplyOutcome): Actuation {
  if (outcome.operation === Operation.Skipped || outcome.error?.code === KnvCode.ManagementConflict) return "Skipped";
  return outcome.error === undefined ? "Succeeded" : "Failed";
}

/** What a pass's prune left in the inventory: each stays tracked, with strategy Delete, until it is gone. */
export interface PrunesInProgress {
  /** Every prune outcome of the pass: those with an error stay in the inventory. */
  readonly pruned: readonly PruneOutcome[];
  /** Deleted, and still there when the pass stopped waiting (finalizers). */
  readonly lingering: readonly ObjectId[];
  /** Left Git, not deleted yet: the pass held its prune back (a failed apply). */
  readonly held: readonly ObjectId[];
}

/** A Delete entry to be: its actuation, and its health where the pass knows it. */
export interface PruneEntry {
  readonly id: ObjectId;
  readonly actuation: Actuation;
  readonly health: HealthStatus;
}

/**
 * As Config Sync's inventory records them: a delete that was refused is Failed, one a safeguard declined
 * (a Namespace or CRD still in use, a dependent not yet gone) Skipped, one still held by finalizers
 * Succeeded (its object Terminating), one not yet attempted Pending.
 */
export function pruneEntries(prunes: PrunesInProgress): PruneEntry[] {
  const entries: PruneEntry[] = [];
  for (const outcome of prunes.pruned) {
    if (outcome.error === undefined) continue;
    const actuation = outcome.operation === PruneOperation.Failed ? "Failed" : "Skipped";
    entries.push({ id: outcome.id, actuation, health: HealthStatus.Unknown });
  }
  for (const id of prunes.lingering) entries.push({ id, actuation: "Succeeded", health: HealthStatus.Terminating });
  for (const id of prunes.held) entries.push({ id, actuation: "Pending", health: HealthStatus.Unknown });
  return entries;
}

/** The entry as written to the ResourceGroup. */
export function entryOf(t: Tracked): ResourceStatusEntry {
  const conditions = t.ownership === undefined ? t.conditions : [...t.conditions, t.ownership];
  return {
    group: t.id.group,
    kind: t.id.kind,
    namespace: t.id.namespace ?? "",
    name: t.id.name,
    status: reportedStatus(t.actuation, t.health),
    ...(t.sourceHash === "" ? {} : { sourceHash: t.sourceHash }),
    strategy: t.strategy,
    actuation: t.actuation,
    reconcile: t.reconcile,
    ...(conditions.length === 0 ? {} : { conditions }),
  };
}

const healths = new Set<string>(Object.values(HealthStatus));
const actuations = new Set<string>(["Pending", "Succeeded", "Skipped", "Failed"]);
const reconciles = new Set<string>(["Pending", "Succeeded", "Skipped", "Timeout", "Failed"]);
/** The owner OwnershipOverlap names, in Config Sync's wording (ownershipCondition). */
const ownerInMessage = /^This resource is owned by another ResourceGroup (\S+)\. /;

/**
 * An entry of the stored group's status read back (a restarted reconciler carries on from it), or
 * undefined when it is not one this code could have written.
 */
export function restoredEntry(raw: unknown): Tracked | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const entry = raw as Record<string, unknown>;
  const text = (key: string): string => (typeof entry[key] === "string" ? entry[key] : "");
  const [group, kind, namespace, name] = [text("group"), text("kind"), text("namespace"), text("name")];
  if (kind === "" || name === "" || !actuations.has(text("actuation"))) return undefined;
  const actuation = text("actuation") as Actuation;
  const strategy: Strategy = text("strategy") === "Delete" ? "Delete" : "Apply";
  const health = healths.has(text("status")) ? (text("status") as HealthStatus) : HealthStatus.Unknown;
  const stored = text("reconcile");
  const reconcile = reconciles.has(stored)
    ? (stored as Reconcile)
    : reconcileOf(actuation, health, "Pending", strategy);
  const conditions = Array.isArray(entry["conditions"]) ? (entry["conditions"] as GroupCondition[]) : [];
  const ownership = conditions.find((c) => c.type === GroupConditionType.OwnershipOverlap);
  return {
    id: { group, kind, namespace, name },
    sourceHash: text("sourceHash"),
    strategy,
    actuation,
    health,
    reconcile,
    foreignOwner: ownership === undefined ? undefined : (ownerInMessage.exec(ownership.message ?? "")?.[1] ?? ""),
    ownership,
    conditions: conditions.filter((c) => c.type !== GroupConditionType.OwnershipOverlap),
  };
}
