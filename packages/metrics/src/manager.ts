/**
 * The reconciler-manager's metrics: what it records, and nothing it does not (the reconciler's
 * Config Sync metrics live in the reconciler's registry). Config Sync's reconciler-manager records
 * reconcile_duration_seconds; the rest are driftless's own, under `driftless_`.
 */
import { Registry } from "prom-client";
import { CONFIG_SYNC_BUCKETS } from "./config-sync.ts";
import { counter, gauge, histogram, type CounterHandle, type GaugeHandle, type HistogramHandle } from "./handles.ts";
import {
  FinalizerRemovalReason,
  ReconcilerState,
  WebhookProviderLabel,
  WebhookRequestResult,
  type Status,
  type SyncLabelSet,
} from "./labels.ts";
import { collectProcessMetrics } from "./process-metrics.ts";
import { queueMetrics, type QueueMetrics } from "./queue.ts";

export interface ManagerMetricsOptions {
  /** Prefix of Config Sync's metrics. Default `config_sync_`. */
  readonly prefix?: string;
  /** Prefix of driftless's own metrics. Default `driftless_`. */
  readonly ownPrefix?: string;
  /** Also export Node's process metrics (process_*, nodejs_*). Default true. */
  readonly processMetrics?: boolean;
  /**
   * Register driftless_reconciler_restarts_total. Default true; false in deployment mode, where the
   * kubelet restarts reconcilers and the manager (watching Deployments, not Pods) never sees it.
   */
  readonly reconcilerRestarts?: boolean;
}

export interface ManagerMetrics extends QueueMetrics {
  readonly registry: Registry;
  /** config_sync_reconcile_duration_seconds{status}: one manager reconcile of a sync. */
  readonly reconcileDuration: HistogramHandle<{ status: Status }>;
  /** driftless_reconcilers{state}: reconcilers the manager runs, by state (every state has a series). */
  readonly reconcilers: GaugeHandle<{ state: ReconcilerState }>;
  /** driftless_reconciler_restarts_total{configsync_sync_*}: a reconciler exited or failed to start, and is started again. */
  readonly reconcilerRestarts: CounterHandle<SyncLabelSet> | undefined;
  /** driftless_finalizer_removals_total{reason}. */
  readonly finalizerRemovals: CounterHandle<{ reason: FinalizerRemovalReason }>;
  /** driftless_webhook_requests_total{provider,result}: every series from 0 (0 too where no webhook is served). */
  readonly webhookRequests: CounterHandle<{ provider: WebhookProviderLabel; result: WebhookRequestResult }>;
  /**
   * driftless_kube_requests_total{verb,resource,status}: requests the manager sent to the API server (retries
   * count again; status `error` for a 4xx/5xx or no answer); resource as the API server labels it
   * (`deployments`, `reposyncs/status`), so never per object.
   */
  readonly kubeRequests: CounterHandle<{ verb: string; resource: string; status: Status }>;
}

export function createManagerMetrics(options: ManagerMetricsOptions = {}): ManagerMetrics {
  const registry = new Registry();
  if (options.processMetrics ?? true) collectProcessMetrics(registry);
  const own = (name: string): string => `${options.ownPrefix ?? "driftless_"}${name}`;

  const reconcilers = gauge<{ state: ReconcilerState }>(registry, {
    name: own("reconcilers"),
    help: "Reconcilers run by the manager, by state",
    labelNames: ["state"],
  });
  for (const state of Object.values(ReconcilerState)) reconcilers.set({ state }, 0);
  const finalizerRemovals = counter<{ reason: FinalizerRemovalReason }>(registry, {
    name: own("finalizer_removals_total"),
    help: "Finalizers the manager removed from RootSyncs and RepoSyncs, by reason",
    labelNames: ["reason"],
  });
  for (const reason of Object.values(FinalizerRemovalReason)) finalizerRemovals.inc({ reason }, 0);
  const webhookRequests = counter<{ provider: WebhookProviderLabel; result: WebhookRequestResult }>(registry, {
    name: own("webhook_requests_total"),
    help: "Push webhook requests received, by provider and what became of them",
    labelNames: ["provider", "result"],
  });
  for (const provider of Object.values(WebhookProviderLabel))
    for (const result of Object.values(WebhookRequestResult)) webhookRequests.inc({ provider, result }, 0);

  return {
    registry,
    ...queueMetrics(registry, options.ownPrefix ?? "driftless_"),
    reconcileDuration: histogram(
      registry,
      {
        name: `${options.prefix ?? "config_sync_"}reconcile_duration_seconds`,
        help: "Seconds taken by one reconcile of a RootSync or RepoSync by the manager",
        labelNames: ["status"],
      },
      CONFIG_SYNC_BUCKETS,
    ),
    reconcilers,
    reconcilerRestarts:
      options.reconcilerRestarts === false
        ? undefined
        : counter<SyncLabelSet>(registry, {
            name: own("reconciler_restarts_total"),
            help: "Times a reconciler exited or failed to start and was started again, by sync (process mode)",
            labelNames: ["configsync_sync_kind", "configsync_sync_name", "configsync_sync_namespace"],
          }),
    finalizerRemovals,
    webhookRequests,
    kubeRequests: counter<{ verb: string; resource: string; status: Status }>(registry, {
      name: own("kube_requests_total"),
      help: "Requests the manager sent to the API server, by verb, resource and outcome",
      labelNames: ["verb", "resource", "status"],
    }),
  };
}
