/**
 * Job names and payloads. Jobs carry only what triggered them: every pass recomputes from the
 * current state of Git and the cluster, so a job is a reason to look, never a description of work.
 * Payloads come back from Redis as unknown JSON and are parsed once, here, at the edge.
 */
import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import { SyncKind, type SyncRef } from "./names.ts";

/** What made a sync's reconciler look again. */
export const SyncTrigger = {
  Poll: "poll",
  Webhook: "webhook",
  Drift: "drift",
  Manager: "manager",
  Startup: "startup",
  Retry: "retry",
} as const;
export type SyncTrigger = (typeof SyncTrigger)[keyof typeof SyncTrigger];

/** The one job name on a sync's queue. */
export const RECONCILE_JOB = "reconcile";
export type ReconcileJobName = typeof RECONCILE_JOB;

export interface ReconcileJobData {
  readonly trigger: SyncTrigger;
  /** Free text for logs, e.g. the drifted object's kind and name. Never a secret. */
  readonly reason?: string;
  /** The commit a webhook announced, if any (a hint: the pass still resolves the branch itself). */
  readonly commit?: string;
  /** ISO 8601 time of the enqueue that created the job. */
  readonly requestedAt: string;
}

/** What the manager does for one sync. */
export const ManagerAction = {
  Ensure: "ensure",
  Teardown: "teardown",
} as const;
export type ManagerAction = (typeof ManagerAction)[keyof typeof ManagerAction];

/** What made the manager look at a sync again. */
export const ManagerTrigger = {
  /** A watch event on the RootSync/RepoSync. */
  Watch: "watch",
  /** A watch event on the sync's namespace (e.g. it began terminating). */
  Namespace: "namespace",
  /** The periodic full resync. */
  Resync: "resync",
  Startup: "startup",
  /** The reconciler workload changed (crashed, exited, was deleted). */
  Workload: "workload",
} as const;
export type ManagerTrigger = (typeof ManagerTrigger)[keyof typeof ManagerTrigger];

export interface ManagerJobData extends SyncRef {
  readonly trigger: ManagerTrigger;
  /** ISO 8601 time of the enqueue that created the job. */
  readonly requestedAt: string;
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function oneOf<T extends string>(values: Readonly<Record<string, T>>, value: unknown): value is T {
  return typeof value === "string" && (Object.values(values) as readonly string[]).includes(value);
}

function optionalString(value: unknown): value is string | undefined {
  return value === undefined || typeof value === "string";
}

// A payload that does not parse was not written by this code (or by an incompatible version):
// retrying cannot fix it, so it is terminal; the next poll enqueues a well-formed job anyway.
function badPayload(queueName: string, jobName: string, detail: string): DriftlessError {
  return new DriftlessError({
    code: KnvCode.Internal,
    errorClass: ErrorClass.Terminal,
    message: `queue ${queueName}: job ${jobName} has an invalid payload: ${detail}`,
  });
}

export function parseReconcileJobData(queueName: string, data: unknown): ReconcileJobData {
  if (!isRecord(data)) throw badPayload(queueName, RECONCILE_JOB, "not an object");
  const { trigger, reason, commit, requestedAt } = data;
  if (!oneOf(SyncTrigger, trigger))
    throw badPayload(queueName, RECONCILE_JOB, `unknown trigger ${JSON.stringify(trigger)}`);
  if (typeof requestedAt !== "string") throw badPayload(queueName, RECONCILE_JOB, "requestedAt is not a string");
  if (!optionalString(reason) || !optionalString(commit))
    throw badPayload(queueName, RECONCILE_JOB, "reason/commit is not a string");
  return {
    trigger,
    requestedAt,
    ...(reason === undefined ? {} : { reason }),
    ...(commit === undefined ? {} : { commit }),
  };
}

export function parseManagerJob(
  queueName: string,
  name: string,
  data: unknown,
): { action: ManagerAction; data: ManagerJobData } {
  if (!oneOf(ManagerAction, name)) throw badPayload(queueName, name, "unknown job name");
  if (!isRecord(data)) throw badPayload(queueName, name, "not an object");
  const { kind, namespace, name: syncName, trigger, requestedAt } = data;
  if (!oneOf(SyncKind, kind)) throw badPayload(queueName, name, `unknown kind ${JSON.stringify(kind)}`);
  if (typeof namespace !== "string" || typeof syncName !== "string")
    throw badPayload(queueName, name, "namespace/name is not a string");
  if (!oneOf(ManagerTrigger, trigger)) throw badPayload(queueName, name, `unknown trigger ${JSON.stringify(trigger)}`);
  if (typeof requestedAt !== "string") throw badPayload(queueName, name, "requestedAt is not a string");
  return { action: name, data: { kind, namespace, name: syncName, trigger, requestedAt } };
}
