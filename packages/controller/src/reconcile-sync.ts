/**
 * The manager's work for one sync, level-triggered: whatever job brought us here, read the sync
 * as it is now and do what that state requires. Running it twice, or after a crash halfway, is
 * safe: every step checks before it writes.
 */
import {
  Finalizer,
  getCondition,
  Kind,
  SyncConditionType,
  isConditionTrue,
  isSuspended,
  pendingSyncRequest,
  RootSyncNamespace,
  InvalidSyncError,
  toDriftlessError,
  type DriftlessError,
  type SyncCondition,
} from "@driftless/api";
import type { KubeClient, KubeObject } from "@driftless/kube";
import { FinalizerRemovalReason } from "@driftless/metrics";
import type { SyncRef } from "@driftless/queue";
import type { Logger } from "@driftless/sync";
import { addFinalizer, hasFinalizer, namespaceTerminating, removeFinalizer } from "./finalizers.ts";
import { syncMapping } from "./resources.ts";
import { unknownOverrideContainers } from "./container-overrides.ts";
import { finalizationSync } from "./finalization-sync.ts";
import { reportsSetupFailure, setupFailureReason, type JobAttempt } from "./setup-failure.ts";
import {
  reportIgnoredOverrides,
  reportReconcilerFailing,
  reportReconciling,
  reportSetupFailing,
  reportStalled,
} from "./sync-status.ts";
import { validateSync, type ValidateOptions } from "./validate.ts";
import type { ReconcilerWorkload, TeardownPending, WorkloadStatus } from "./workload.ts";

export interface SyncContext {
  readonly client: KubeClient;
  readonly workload: ReconcilerWorkload;
  readonly log: Logger;
  /** What this manager refuses beyond the API's own checks (file:// repositories, shell in rendering). */
  readonly validation: ValidateOptions;
  /** True when the sync is one this manager serves (its label selector). */
  readonly inScope: (sync: KubeObject) => boolean;
  /** True while `kind`'s syncs were never listed (its CRD answered 404): a sync not found may still exist. */
  readonly kindUnlisted?: (kind: SyncRef["kind"]) => boolean;
  readonly onFinalizerRemoved: (reason: FinalizerRemovalReason) => void;
  /** Asks the sync's reconciler for a pass now, on its own queue (it polls Git, not its RSync). */
  readonly requestPass: (sync: SyncRef, reason: string) => Promise<void>;
  /** After a teardown: clean up what lives outside the cluster (the sync's queue). */
  readonly onTornDown: (sync: SyncRef) => Promise<void>;
}

/**
 * `attempt`: the manager job's, when a queue runs this (a transient setup failure goes on status only
 * once it has kept failing); without it every failure does.
 */
export async function reconcileSync(ctx: SyncContext, ref: SyncRef, attempt?: JobAttempt): Promise<void> {
  const raw = await ctx.client.get(syncMapping(ref.kind), ref.namespace, ref.name);
  if (ref.kind === Kind.RootSync && ref.namespace !== RootSyncNamespace) return refuseMisplacedRootSync(ctx, ref, raw);
  // Gone: nothing may be left running for it (a Deployment still Terminating brings it back here once gone).
  if (raw === undefined) {
    // A type not served answers 404 too: its reconciler stays until the kind is listed and the sync found gone.
    if (ctx.kindUnlisted?.(ref.kind) === true) {
      ctx.log.warn("sync not found while its kind is not served: its reconciler is kept", { sync: describe(ref) });
      return;
    }
    await tearDown(ctx, ref);
    return;
  }
  // No longer selected by this manager: let go entirely, so its deletion never waits for us.
  if (!ctx.inScope(raw)) return release(ctx, ref, raw);
  if (raw.metadata.deletionTimestamp !== undefined) return finalizeSync(ctx, ref, raw, attempt);

  const validation = validateSync(raw, ctx.validation);
  if (!validation.ok) return stall(ctx, ref, validation.errors);
  // Added before anything is created, so a deletion always waits for the teardown.
  await addFinalizer(ctx.client, ref, Finalizer.ReconcilerManager);
  let status: WorkloadStatus;
  try {
    status = await ctx.workload.ensure(validation.sync);
  } catch (error) {
    return setupFailed(ctx, ref, error, attempt);
  }
  if (status.failure !== undefined) return reportReconcilerFailing(ctx.client, ref, status.failure);
  await reportReconciling(ctx.client, ref, status.ready, status.reason, status.message);
  // Read from the sync in hand first: most syncs never have the warning, and pay no request for it.
  const unknown = unknownOverrideContainers(validation.sync);
  if (unknown.length > 0 || hasCondition(raw, SyncConditionType.OverridesIgnored))
    await reportIgnoredOverrides(ctx.client, ref, unknown);
  // A suspension added or lifted changes no generation: the reconciler learns of it on its next poll,
  // or now, when status does not say it yet (level-triggered: asks until the reconciler has answered).
  if (status.ready && isSuspended(raw.metadata.annotations) !== statusSaysSuspended(raw))
    await ctx.requestPass(ref, "driftless.dev/suspend changed");
  // `driftless sync`: a request no pass has answered yet (the reconciler echoes it once its pass is done).
  else if (status.ready && pendingSyncRequest(raw.metadata.annotations) !== undefined)
    await ctx.requestPass(ref, "driftless.dev/sync-requested-at");
  // A reconciler adds its finalizer at each job. One that synced before and lost it (the manager whose selector
  // the sync left strips it) gets a job now, so a deletion meanwhile does not go without its finalization.
  else if (status.ready && !hasFinalizer(raw, Finalizer.Reconciler) && syncedBefore(raw))
    await ctx.requestPass(ref, "the reconciler finalizer is missing");
}

function syncedBefore(raw: KubeObject): boolean {
  const status = raw["status"] as { lastSyncedCommit?: string } | undefined;
  return (status?.lastSyncedCommit ?? "") !== "";
}

function statusSaysSuspended(raw: KubeObject): boolean {
  const status = raw["status"] as { conditions?: SyncCondition[] } | undefined;
  return isConditionTrue(status?.conditions, SyncConditionType.Suspended);
}

function hasCondition(raw: KubeObject, type: SyncConditionType): boolean {
  const status = raw["status"] as { conditions?: SyncCondition[] } | undefined;
  return getCondition(status?.conditions, type) !== undefined;
}

/**
 * A sync being deleted. Its reconciler runs until it has removed its own finalizer (deleting or
 * orphaning the managed objects); then the manager tears the reconciler down and lets go.
 */
async function finalizeSync(ctx: SyncContext, ref: SyncRef, raw: KubeObject, attempt?: JobAttempt): Promise<void> {
  let waitingForReconciler = hasFinalizer(raw, Finalizer.Reconciler);
  // The escape hatch of reconciler-finalizer-race: in a Terminating namespace the RepoSync's
  // reconciler has lost (or is about to lose) the RoleBinding it needs to finish, and the
  // namespace controller deletes its objects anyway. A RootSync lives in the system namespace
  // and keeps waiting for its reconciler.
  if (waitingForReconciler && ref.kind === Kind.RepoSync && (await namespaceTerminating(ctx.client, ref.namespace))) {
    if (await removeFinalizer(ctx.client, ref, Finalizer.Reconciler)) {
      ctx.onFinalizerRemoved(FinalizerRemovalReason.NamespaceTerminating);
      ctx.log.info("removed the reconciler finalizer: the namespace is terminating", { sync: describe(ref) });
    }
    waitingForReconciler = false;
  }
  if (waitingForReconciler) {
    // Keep (or bring back) the reconciler: only it can finish the deletion. The watch event of
    // its finalizer going away brings this sync back here.
    if (!(await keepReconcilerForDeletion(ctx, ref, raw, attempt))) return;
    // The reconciler notices a deletion on its next pass; without this that is the next poll.
    await ctx.requestPass(ref, "the sync is being deleted");
    return;
  }
  await letGo(ctx, ref, "the sync is being deleted");
}

/**
 * The reconciler that finishes a deletion. A valid spec gets its own; an invalid one keeps the reconciler
 * running (set up for an earlier spec), as Config Sync's Deployment keeps running, and when none runs (the
 * manager restarted, the Deployment was removed) one starts on finalizationSync's stand-in: finalization
 * reads no source. False when none can run; the sync's Stalled condition says why.
 */
async function keepReconcilerForDeletion(
  ctx: SyncContext,
  ref: SyncRef,
  raw: KubeObject,
  attempt?: JobAttempt,
): Promise<boolean> {
  const validation = validateSync(raw, ctx.validation);
  let status = validation.ok ? undefined : await ctx.workload.running(ref);
  if (status === undefined) {
    const setup = validation.ok ? validation : finalizationSync(raw);
    if (!setup.ok) {
      await stallDeletion(ctx, ref, setup.errors);
      return false;
    }
    try {
      status = await ctx.workload.ensure(setup.sync);
    } catch (error) {
      await setupFailed(ctx, ref, error, attempt);
      return false;
    }
  }
  if (status.failure !== undefined) await reportReconcilerFailing(ctx.client, ref, status.failure);
  return true;
}

/** No reconciler can be started to finish the deletion: said on status, never a silent wait. */
async function stallDeletion(ctx: SyncContext, ref: SyncRef, errors: readonly DriftlessError[]): Promise<void> {
  const waiting = new InvalidSyncError(
    ref,
    `the sync is being deleted and its finalizer ${Finalizer.Reconciler} waits for its reconciler, which cannot be started on this spec: fix the spec, or remove that finalizer by hand to leave the managed objects as they are`,
  );
  ctx.log.warn("sync is being deleted but no reconciler can be started to finish it", {
    sync: describe(ref),
    errors: errors.map((e) => `${e.code}: ${e.message}`),
  });
  await reportStalled(ctx.client, ref, "Validation", [waiting, ...errors]);
}

/**
 * A RootSync outside config-management-system never gets a reconciler: it is reported Stalled. Its
 * reconciler's name does not carry its namespace, so it names the real RootSync's of the same name:
 * its deletion (or a finalizer put on it by hand) must tear nothing down.
 */
async function refuseMisplacedRootSync(ctx: SyncContext, ref: SyncRef, raw: KubeObject | undefined): Promise<void> {
  if (raw === undefined || raw.metadata.deletionTimestamp !== undefined) {
    if (raw !== undefined) await removeFinalizer(ctx.client, ref, Finalizer.ReconcilerManager);
    ctx.log.info("a RootSync outside config-management-system is going: it had no reconciler to tear down", {
      sync: describe(ref),
    });
    return;
  }
  const validation = validateSync(raw, ctx.validation);
  if (!validation.ok) await stall(ctx, ref, validation.errors);
}

/**
 * Tears the reconciler down, and only then removes the manager finalizer. A teardown still waiting (its
 * Deployment held by someone's finalizer) is Reconciling on status, as Config Sync's, and keeps the finalizer.
 */
async function letGo(ctx: SyncContext, ref: SyncRef, why: string): Promise<void> {
  const pending = await tearDown(ctx, ref);
  if (pending !== undefined) {
    ctx.log.info("teardown waits for the reconciler to go", { sync: describe(ref), why: pending.message });
    return reportReconciling(ctx.client, ref, false, pending.reason, pending.message);
  }
  await removeManagerFinalizer(ctx, ref, why);
}

async function removeManagerFinalizer(ctx: SyncContext, ref: SyncRef, why: string): Promise<void> {
  if (await removeFinalizer(ctx.client, ref, Finalizer.ReconcilerManager)) {
    ctx.onFinalizerRemoved(FinalizerRemovalReason.Teardown);
    ctx.log.info("reconciler torn down; removed the manager finalizer", { sync: describe(ref), why });
  }
}

/**
 * A sync out of this manager's selector: its reconciler stops, and so its finalizer goes too, or a later
 * deletion would wait for ever on a reconciler nobody runs (this manager no longer watches the sync). The
 * managed objects stay as they are. A manager whose selector takes the sync adds its finalizer again and asks
 * its reconciler for a job, which adds the reconciler's. A deletion already under way keeps the reconciler
 * finalizer: the finalization it stands for is for whichever manager serves the sync now to finish.
 */
async function release(ctx: SyncContext, ref: SyncRef, raw: KubeObject): Promise<void> {
  const why = "the sync left this manager's selector";
  // Nothing of this manager watches the sync any more, so nothing would bring it back to finish a wait.
  await tearDown(ctx, ref, { wait: false });
  if (raw.metadata.deletionTimestamp === undefined && (await removeFinalizer(ctx.client, ref, Finalizer.Reconciler))) {
    ctx.onFinalizerRemoved(FinalizerRemovalReason.LeftScope);
    ctx.log.info("removed the reconciler finalizer", { sync: describe(ref), why });
  }
  await removeManagerFinalizer(ctx, ref, why);
}

async function tearDown(
  ctx: SyncContext,
  ref: SyncRef,
  options?: { readonly wait: boolean },
): Promise<TeardownPending | undefined> {
  const pending = await ctx.workload.teardown(ref, options);
  if (pending === undefined) await ctx.onTornDown(ref);
  return pending;
}

async function stall(ctx: SyncContext, ref: SyncRef, errors: readonly DriftlessError[]): Promise<void> {
  ctx.log.warn("sync is invalid; no reconciler is set up for this spec (one already running is kept)", {
    sync: describe(ref),
    errors: errors.map((e) => `${e.code}: ${e.message}`),
  });
  await reportStalled(ctx.client, ref, "Validation", errors);
}

/**
 * The reconciler could not be set up. A spec the manager refuses there (its reconciler name is another
 * sync's) is Stalled like an invalid one, and not retried. Anything else (the API server refused a
 * step) is Stalled with the error and Reconciling, then thrown again, so the manager queue retries it
 * as classified: `retry` with backoff, `terminal` at the next change or resync.
 */
async function setupFailed(ctx: SyncContext, ref: SyncRef, thrown: unknown, attempt?: JobAttempt): Promise<void> {
  if (thrown instanceof InvalidSyncError) {
    ctx.log.warn("the reconciler cannot be set up for this sync", {
      sync: describe(ref),
      error: `${thrown.code}: ${thrown.message}`,
    });
    return reportStalled(ctx.client, ref, "Validation", [thrown]);
  }
  const error = toDriftlessError(thrown);
  if (reportsSetupFailure(error, attempt)) {
    try {
      await reportSetupFailing(ctx.client, ref, setupFailureReason(error), error);
    } catch (statusError) {
      // The setup's failure is the one to retry on; this one only hid it.
      ctx.log.warn("could not report a failed reconciler setup on the sync's status", {
        sync: describe(ref),
        error: String(statusError),
      });
    }
  }
  throw thrown;
}

function describe(ref: SyncRef): string {
  return `${ref.kind}/${ref.namespace}/${ref.name}`;
}
