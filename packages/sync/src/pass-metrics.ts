/** What one pass and each API call record in Config Sync's metrics. */
import { KnvCode, reconcilerName, type DriftlessError } from "@driftless/api";
import type { ApplyOutcome, SyncIdentity } from "@driftless/applier";
import type { KubeClient } from "@driftless/kube";
import {
  DriftKind,
  errorCodeClass,
  InternalErrorSource,
  type Metrics,
  type ReconcilerType,
  type Status,
} from "@driftless/metrics";
import type { PassResult, PassTrigger } from "./pass.ts";
import { reportsSyncPhase } from "./status.ts";

/** A defensive check that fired, or an exception nothing classified: a bug, not the user's configuration. */
const isInternal = (error: DriftlessError): boolean =>
  error.code === KnvCode.Internal || error.code === KnvCode.Undocumented;

/**
 * A remediator correction's internal error, as Config Sync's remediator counts its own: the correction
 * threw (apply reports every failure as an outcome, so a throw is a bug) or failed as internal.
 */
export function recordCorrectionInternalError(
  m: Metrics,
  failure: { readonly error?: DriftlessError } | "threw",
): void {
  if (failure === "threw" || (failure.error !== undefined && isInternal(failure.error)))
    m.internalErrors.inc({ source: InternalErrorSource.Remediator });
}

/** KNV1060: the object is another sync's, and was left alone. */
const isManagementConflict = (outcome: ApplyOutcome): boolean => outcome.error?.code === KnvCode.ManagementConflict;

/**
 * A drift correction, as Config Sync's remediator records one: its duration, and the write it sent as
 * apply_operations_total{controller="remediator"}, a refused one too (status="error"). An object already as
 * declared was not written and is not counted.
 */
export function recordCorrection(m: Metrics, outcome: ApplyOutcome, seconds: number): void {
  const status: Status = outcome.error === undefined ? "success" : "error";
  m.remediateDuration.observe({ status }, seconds);
  const operation = correctionWrite(outcome);
  if (operation !== undefined) m.applyOperations.inc({ operation, status, controller: "remediator" });
}

function correctionWrite(outcome: ApplyOutcome): "create" | "update" | undefined {
  if (outcome.operation === "created") return "create";
  if (outcome.operation === "updated") return "update";
  return outcome.attempted;
}

const statusOf = (errors: readonly DriftlessError[]): Status => (errors.length === 0 ? "success" : "error");

/** api_duration_seconds for every call the client makes, whichever package makes it. */
export function observeApiCalls(client: KubeClient, metrics: Metrics): () => void {
  // A 404 is an error here as in Config Sync, whose clients return NotFound as an error.
  return client.requests.onRequest((verb, status, ms) =>
    metrics.apiDuration.observe(
      { operation: verb, status: status >= 200 && status < 400 ? "success" : "error" },
      ms / 1000,
    ),
  );
}

/**
 * Series a scrape should show from the first pass on, at 0: Config Sync's internal_errors_total
 * appears only once one fired, which leaves an alert on it nothing to tell "none" from "no data";
 * remediate_duration_seconds only once drift was corrected, which a healthy sync may never see.
 * The internal error sources are the two Config Sync's reconciler records: its parser and its remediator.
 */
export function initPassMetrics(metrics: Metrics): void {
  metrics.internalErrors.inc({ source: InternalErrorSource.Parser }, 0);
  metrics.internalErrors.inc({ source: InternalErrorSource.Remediator }, 0);
  metrics.remediateDuration.zero({ status: "success" });
  metrics.remediateDuration.zero({ status: "error" });
}

/** pipeline_error_observed's labels, as Config Sync's: the reconciler's name, and its type as the name of a default sync. */
export function pipelineLabels(identity: SyncIdentity): { readonly name: string; readonly reconciler: ReconcilerType } {
  return {
    name: reconcilerName(identity.kind, identity.namespace, identity.name),
    reconciler: identity.kind === "RootSync" ? "root-sync" : "repo-sync",
  };
}

/** Records a finished pass in Config Sync's metrics (of one cut short by a new spec, only the writes it sent). */
export function recordPass(
  m: Metrics,
  identity: SyncIdentity,
  trigger: PassTrigger,
  result: PassResult,
  seconds: number,
): void {
  recordObjectOperations(m, result);
  // Config Sync rolls the reconciler pod on a new spec: its applier had counted each write as sent, and the
  // attempt itself (last_sync, last_apply, durations) was never recorded; nor is it on status here.
  if (result.skipped === "superseded") return;
  const renderingErrors = result.rendering?.errors ?? [];
  const status = statusOf([...renderingErrors, ...result.sourceErrors, ...result.syncErrors]);
  m.reconcileDuration.observe({ status }, seconds);
  const syncReported = reportsSyncPhase(result);
  // After every sync attempt, as Config Sync: a pass that reached the apply, successful or not; its status is
  // the commit's (objects set aside for their kind are source errors of a commit that was applied).
  if (syncReported && result.commit !== undefined)
    m.lastSync.record({ status: statusOf([...result.sourceErrors, ...result.syncErrors]), commit: result.commit });
  const commit = result.commit ?? "";
  const declaredCount = result.declared?.length ?? result.refusedDeclaredCount;
  if (declaredCount !== undefined) m.declaredResources.set({ commit }, declaredCount);
  recordStages(m, trigger, result);
  const applyS = result.phases?.["apply"];
  // Every apply run, one of no objects included (an empty directory, or a commit that only prunes), as Config
  // Sync's applier records each run: the commit's series say it was applied.
  if (applyS !== undefined) {
    m.applyDuration.observe({ status: statusOf(result.syncErrors), commit }, applyS);
    m.lastApply.record({
      status: statusOf(result.syncErrors),
      ...(result.commit === undefined ? {} : { commit: result.commit }),
    });
  }
  // Added by every pass that applied, 0 included, so the applied commit's series exists from its first pass. A
  // pass that applied nothing (a source it could not fetch or parse) moves no series: the applied commit's count
  // stays, as Config Sync's, which counts against the commit its applier and remediator hold.
  if (result.reachedApply === true)
    m.resourceConflicts.inc({ commit }, result.applied.filter(isManagementConflict).length);
  // As Config Sync records them, with each status block it writes: a stage the pass did not reach keeps its
  // last value, as its block on status does (a fetch failure keeps status.rendering, a source error status.sync).
  const pipeline = pipelineLabels(identity);
  recordStageErrors(m, pipeline, "source", result.sourceErrors);
  if (result.rendering !== undefined) recordStageErrors(m, pipeline, "rendering", renderingErrors);
  if (syncReported) recordStageErrors(m, pipeline, "sync", result.syncErrors);
  // Config Sync's applier records none (a sync stage's internal error is in reconciler_errors' 9xxx class).
  m.internalErrors.inc({ source: InternalErrorSource.Parser }, result.sourceErrors.filter(isInternal).length);
  recordSuspension(m, result);
  // resource_count, ready_resource_count and the other ResourceGroup metrics follow the group's live
  // status (resource-group-status.ts), not the pass.
}

/** apply_operations_total{controller="applier"}: each write the pass sent, as Config Sync's applier counts them. */
function recordObjectOperations(m: Metrics, result: PassResult): void {
  for (const outcome of result.applied) {
    // "update" for a create too: Config Sync's applier records every apply so (its remediator tells them apart).
    if (outcome.operation === "created" || outcome.operation === "updated")
      m.applyOperations.inc({ operation: "update", status: "success", controller: "applier" });
    // Another sync's object is not written: Config Sync's inventory policy skips it, and records no operation.
    else if (outcome.operation === "failed" && !isManagementConflict(outcome))
      m.applyOperations.inc({ operation: "update", status: "error", controller: "applier" });
  }
  for (const pruned of result.pruned) {
    // Left in place and released (detach): Config Sync's applier counts it as "unmanage".
    if (pruned.operation === "detached")
      m.applyOperations.inc({ operation: "unmanage", status: "success", controller: "applier" });
    // One still Terminating from an earlier pass's delete was not deleted again.
    if ((pruned.operation === "deleted" && pruned.terminating !== true) || pruned.operation === "failed") {
      m.applyOperations.inc({
        operation: "delete",
        status: pruned.operation === "deleted" ? "success" : "error",
        controller: "applier",
      });
    }
  }
}

/** driftless_watch_undeclared_objects: this pass's counts by watched type; a type no longer watched leaves. */
export function recordUndeclared(m: Metrics, counts: ReadonlyMap<string, number>): void {
  m.watchUndeclaredObjects.reset();
  for (const [type, count] of counts) m.watchUndeclaredObjects.set({ type }, count);
}

/** reconciler_errors by KNV class, and pipeline_error_observed, of one stage whose status block the pass wrote. */
function recordStageErrors(
  m: Metrics,
  pipeline: ReturnType<typeof pipelineLabels>,
  component: "source" | "rendering" | "sync",
  errors: readonly DriftlessError[],
): void {
  for (const errorclass of ["1xxx", "2xxx", "9xxx"] as const)
    m.reconcilerErrors.set(
      { component, errorclass },
      errors.filter((e) => errorCodeClass(e.code) === errorclass).length,
    );
  m.pipelineErrorObserved.set({ ...pipeline, component }, errors.length > 0 ? 1 : 0);
}

/** driftless_sync_suspended, and what the last suspended pass found (0 once resumed). */
function recordSuspension(m: Metrics, result: PassResult): void {
  m.syncSuspended.set(result.suspension === undefined ? 0 : 1);
  const drift = result.suspension?.drift;
  if (result.suspension !== undefined && drift === undefined) return; // not compared this pass: keep the last
  m.suspendedDrift.set({ drift: DriftKind.Missing }, drift?.missing.length ?? 0);
  m.suspendedDrift.set({ drift: DriftKind.Changed }, drift?.changed.length ?? 0);
  m.suspendedDrift.set({ drift: DriftKind.WouldPrune }, drift?.wouldPrune.length ?? 0);
}

/**
 * parser_duration_seconds by Config Sync's stages: `read` is getting the commit's files (git),
 * `parse` reading and validating them, `update` planning, applying, pruning and the inventory.
 */
function recordStages(m: Metrics, trigger: PassTrigger, result: PassResult): void {
  const phases = result.phases ?? {};
  const fetch = phases["fetch"];
  const read = phases["read"];
  // A pass that never had the files (a failed fetch, a missing dir) never reached Config Sync's parser.
  if (fetch === undefined) return;
  m.parserDuration.observe({ status: "success", trigger, source: "read" }, fetch);
  if (read !== undefined)
    m.parserDuration.observe({ status: statusOf(result.sourceErrors), trigger, source: "parse" }, read);
  const update = ["plan", "apply", "prune", "inventory"].map((p) => phases[p]);
  if (update.some((s) => s !== undefined)) {
    const total = update.reduce<number>((sum, s) => sum + (s ?? 0), 0);
    m.parserDuration.observe({ status: statusOf(result.syncErrors), trigger, source: "update" }, total);
  }
}
