/**
 * A reconciler workload: what runs one sync's reconciler. `deployment` mode creates a Deployment
 * per sync (real clusters); `process` mode supervises a child process per sync (laptops, CI).
 * Both give the reconciler the same identity (identity.ts).
 */
import type { RSync } from "@driftless/api";
import type { ReconcilerState } from "@driftless/metrics";
import type { SyncRef } from "@driftless/queue";

export const ReconcilerMode = {
  Process: "process",
  Deployment: "deployment",
} as const;
export type ReconcilerMode = (typeof ReconcilerMode)[keyof typeof ReconcilerMode];

export interface WorkloadStatus {
  /** True once the reconciler runs (the manager then reports Reconciling=False). */
  readonly ready: boolean;
  /** Condition reason: `Deployment` or `Process`. */
  readonly reason: string;
  readonly message: string;
  /** Why the reconciler cannot start or keeps exiting, in words a user can act on; reported as Stalled. */
  readonly failure?: string;
}

/**
 * A teardown that cannot finish yet: the reconciler's Deployment is Terminating, held by a finalizer of
 * someone else's. Its identity stays until it is gone (its pods still run), and so does the sync's finalizer.
 */
export interface TeardownPending {
  /** Condition reason: the kind of the object waited for, as Config Sync's. */
  readonly reason: string;
  readonly message: string;
}

export interface ReconcilerWorkload {
  readonly mode: ReconcilerMode;
  /** Creates or updates the reconciler of a valid sync so that it runs its current spec. Idempotent. */
  ensure(sync: RSync): Promise<WorkloadStatus>;
  /** The sync's reconciler as it runs now, whatever spec it was set up for; undefined when none runs. Changes nothing. */
  running(sync: SyncRef): Promise<WorkloadStatus | undefined>;
  /**
   * Removes everything of the sync's reconciler; succeeds when there is nothing to remove. Pending when
   * the removal has begun but waits on something else (the watch event of its end brings the sync back);
   * with `wait: false` (a sync no watch of this manager brings back) everything else goes at once.
   */
  teardown(sync: SyncRef, options?: { readonly wait: boolean }): Promise<TeardownPending | undefined>;
  /** Reconcilers this manager runs, by state (driftless_reconcilers). */
  states(): ReadonlyMap<ReconcilerState, number>;
  /** Manager shutdown: stops what would not survive the manager (child processes); leaves the rest. */
  close(): Promise<void>;
}

export function syncRefOf(sync: RSync): SyncRef {
  return { kind: sync.kind, namespace: sync.metadata.namespace ?? "", name: sync.metadata.name };
}

export function syncKeyOf(sync: SyncRef): string {
  return `${sync.kind}/${sync.namespace}/${sync.name}`;
}
