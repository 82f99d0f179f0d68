/**
 * @driftless/metrics: the Prometheus registry, metric definitions and the /metrics, /healthz and
 * /readyz server, with the per-connection deadlines and caps every driftless port applies
 * (`connectionServerOptions` + `limitConnections`, also used by the webhook and admission servers).
 *
 * Config Sync's metrics keep Config Sync's names and labels under `config_sync_`, so its
 * dashboards and alerts work unchanged; driftless's own (queues, reconcilers, finalizers,
 * webhooks) are under `driftless_`. A reconciler serves `createMetrics()`, the manager
 * `createManagerMetrics()`: each registers only what it records. Every label has a bounded set
 * of values, enforced by the types.
 *
 * @example
 * ```ts
 * import { createMetrics, serveMetrics, syncLabels } from "@driftless/metrics";
 *
 * const metrics = createMetrics({ defaultLabels: syncLabels(sync) });
 * const server = await serveMetrics({
 *   port: 8675,
 *   registry: metrics.registry,
 *   health: async () => ({ healthy: true, ready: informersSynced() }),
 * });
 *
 * const done = metrics.reconcileDuration.startTimer();
 * // ... one pass ...
 * done({ status: "success" });
 * metrics.applyOperations.inc({ operation: "update", status: "success", controller: "applier" });
 * metrics.lastSync.record({ status: "success", commit });
 * metrics.declaredResources.set({ commit }, objects.length);
 * metrics.recordKustomizeBuild({ latencyMs: 840, resourceCount: 12, usage }); // after a kustomize build
 *
 * // Queue observability (packages/queue's JobOutcome and queues fit these shapes):
 * const queue = new SyncQueue({ sync, connection, hooks: { onJobDone: metrics.recordJob } });
 * metrics.watchQueueDepth("sync", queue);
 *
 * await server.close();
 * ```
 */
export { CONFIG_SYNC_BUCKETS, errorCodeClass } from "./config-sync.ts";
export type { ConfigSyncMetrics, TimestampHandle } from "./config-sync.ts";
export { createMetrics, SYNC_GENERATION_LABEL, syncLabels } from "./create-metrics.ts";
export type { Metrics, MetricsOptions } from "./create-metrics.ts";
export {
  connectionLimits,
  connectionServerOptions,
  DefaultConnectionLimits,
  limitConnections,
} from "./connection-limits.ts";
export type { ConnectionLimits } from "./connection-limits.ts";
export { KUSTOMIZE_BUILD_BUCKETS_MS, KustomizationField } from "./kustomize.ts";
export type {
  BaseSource,
  DeprecatingField,
  HelmInflator,
  KustomizeBuildReport,
  KustomizeMetrics,
  KustomizeUsage,
  MetadataTransformer,
  PatchField,
  SimplificationField,
  TopTierField,
} from "./kustomize.ts";
export { createManagerMetrics } from "./manager.ts";
export type { ManagerMetrics, ManagerMetricsOptions } from "./manager.ts";
export { JOB_BUCKETS } from "./queue.ts";
export type { DepthSource, JobAttempt, QueueMetrics } from "./queue.ts";
export type { CounterHandle, GaugeHandle, HistogramHandle, Labels, NoLabels } from "./handles.ts";
export {
  ApiOperation,
  COMMIT_NONE,
  Controller,
  ErrorCodeClass,
  ErrorComponent,
  FinalizerRemovalReason,
  InternalErrorSource,
  JobResult,
  Operation,
  ParserStage,
  PipelineComponent,
  QueueJobState,
  QueueLabel,
  ReconcilerState,
  ReconcilerType,
  Status,
  Trigger,
  WebhookProviderLabel,
  WebhookRequestResult,
} from "./labels.ts";
export type { JobFailure, SyncLabelSet } from "./labels.ts";
export { createResourceGroupControllerMetrics, ResourceStatusLabel } from "./resource-group.ts";
export type { InventoryCountMetrics, ResourceGroupControllerMetrics, ResourceGroupMetrics } from "./resource-group.ts";
export { serveMetrics } from "./server.ts";
export { DriftKind } from "./suspend.ts";
export type { SuspendMetrics } from "./suspend.ts";
export type { WatchCacheMetrics } from "./watch-cache.ts";
export type { Health, MetricsServer, ServeMetricsOptions } from "./server.ts";
