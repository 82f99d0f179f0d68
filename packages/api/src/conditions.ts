/**
 * Conditions on RootSync/RepoSync status, and pure helpers to set them without churn: a condition
 * whose content did not change is returned as the same array, so callers can skip the status
 * write entirely, and lastTransitionTime only moves when the status flips.
 */
import { kubeTime } from "./kube-time.ts";
import type {
  ConditionStatus,
  ConfigSyncError,
  ErrorSourceRef,
  ErrorSummary,
  SyncCondition,
} from "./sync-status-types.ts";

export const SyncConditionType = {
  /** The manager is still bringing the reconciler up to date with the spec. Written by the manager. */
  Reconciling: "Reconciling",
  /** The manager cannot make progress (invalid spec, missing Secret). Written by the manager. */
  Stalled: "Stalled",
  /** True while the reconciler works on a commit; False with the outcome once done. */
  Syncing: "Syncing",
  /** The reconciler finalizer is deleting or un-managing objects. */
  ReconcilerFinalizing: "ReconcilerFinalizing",
  /** The reconciler finalizer failed; errors say why. */
  ReconcilerFinalizerFailure: "ReconcilerFinalizerFailure",
  /** driftless's own: True while `driftless.dev/suspend` pauses the sync; the message says what differs. */
  Suspended: "Suspended",
  /**
   * driftless's own warning: True while spec.override names containers driftless does not run (and
   * whose settings therefore apply nowhere); removed once none does.
   */
  OverridesIgnored: "OverridesIgnored",
} as const;
export type SyncConditionType = (typeof SyncConditionType)[keyof typeof SyncConditionType];

/** What a caller wants a condition to say; times are filled in by `setCondition`. */
export interface ConditionInput {
  readonly type: string;
  readonly status: ConditionStatus;
  readonly reason?: string;
  readonly message?: string;
  readonly commit?: string;
  readonly errors?: readonly ConfigSyncError[];
  readonly errorSourceRefs?: readonly ErrorSourceRef[];
  readonly errorSummary?: ErrorSummary;
}

export interface SetConditionResult {
  readonly conditions: readonly SyncCondition[];
  /** False when the condition already said exactly this; `conditions` is then the input array. */
  readonly changed: boolean;
}

export function getCondition(
  conditions: readonly SyncCondition[] | undefined,
  type: string,
): SyncCondition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** True when the condition of `type` exists with status True. */
export function isConditionTrue(conditions: readonly SyncCondition[] | undefined, type: string): boolean {
  return getCondition(conditions, type)?.status === "True";
}

/**
 * Sets the condition of `input.type`. lastUpdateTime becomes `now` whenever anything changes;
 * lastTransitionTime only when the status changes (or the condition is new). Other conditions
 * keep their order and content.
 */
export function setCondition(
  conditions: readonly SyncCondition[] | undefined,
  input: ConditionInput,
  now: Date,
): SetConditionResult {
  const current = conditions ?? [];
  const existing = getCondition(current, input.type);
  if (existing !== undefined && sameContent(existing, input)) return { conditions: current, changed: false };

  const time = kubeTime(now);
  const lastTransitionTime =
    existing === undefined || existing.status !== input.status ? time : (existing.lastTransitionTime ?? time);
  const next: SyncCondition = compact({
    type: input.type,
    status: input.status,
    lastUpdateTime: time,
    lastTransitionTime,
    reason: input.reason,
    message: input.message,
    commit: input.commit,
    errors: nonEmpty(input.errors),
    errorSourceRefs: nonEmpty(input.errorSourceRefs),
    errorSummary: input.errorSummary,
  });
  const updated = existing === undefined ? [...current, next] : current.map((c) => (c.type === input.type ? next : c));
  return { conditions: updated, changed: true };
}

/**
 * Config Sync's ClearCondition: a True condition of `type` turns False with no reason or message; one that
 * is False or absent is left as it is, so a sync that never stalled carries no Stalled condition at all.
 */
export function clearCondition(
  conditions: readonly SyncCondition[] | undefined,
  type: string,
  now: Date,
): SetConditionResult {
  const current = conditions ?? [];
  if (getCondition(current, type)?.status !== "True") return { conditions: current, changed: false };
  return setCondition(current, { type, status: "False" }, now);
}

/** Removes the condition of `type`; unchanged (same array) when there was none. */
export function removeCondition(conditions: readonly SyncCondition[] | undefined, type: string): SetConditionResult {
  const current = conditions ?? [];
  if (getCondition(current, type) === undefined) return { conditions: current, changed: false };
  return { conditions: current.filter((c) => c.type !== type), changed: true };
}

function sameContent(existing: SyncCondition, input: ConditionInput): boolean {
  return (
    existing.status === input.status &&
    (existing.reason ?? "") === (input.reason ?? "") &&
    (existing.message ?? "") === (input.message ?? "") &&
    (existing.commit ?? "") === (input.commit ?? "") &&
    jsonEqual(nonEmpty(existing.errors), nonEmpty(input.errors)) &&
    jsonEqual(nonEmpty(existing.errorSourceRefs), nonEmpty(input.errorSourceRefs)) &&
    jsonEqual(existing.errorSummary, input.errorSummary)
  );
}

// A stored condition comes back from the API server with its maps' keys sorted, so equality must
// not depend on key order (comparing serialisations rewrote an unchanged condition on every pass).
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => jsonEqual(item, b[i]));
  }
  const left = Object.entries(a).filter(([, v]) => v !== undefined);
  const right = b as Record<string, unknown>;
  return (
    left.length === Object.values(right).filter((v) => v !== undefined).length &&
    left.every(([key, value]) => jsonEqual(value, right[key]))
  );
}

function nonEmpty<T>(items: readonly T[] | undefined): readonly T[] | undefined {
  return items === undefined || items.length === 0 ? undefined : items;
}

/** Drops undefined and empty-string fields, as Go's omitempty would, so output matches Config Sync's. */
function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== "")) as T;
}
