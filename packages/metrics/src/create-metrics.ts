/** One registry with every metric a reconciler records, ready to serve (the manager's: manager.ts). */
import { Registry } from "prom-client";
import { configSyncMetrics, type ConfigSyncMetrics } from "./config-sync.ts";
import { kustomizeMetrics, type KustomizeMetrics } from "./kustomize.ts";
import { collectProcessMetrics } from "./process-metrics.ts";
import { queueMetrics, type QueueMetrics } from "./queue.ts";
import { resourceGroupMetrics, type ResourceGroupMetrics } from "./resource-group.ts";
import { suspendMetrics, type SuspendMetrics } from "./suspend.ts";

export interface MetricsOptions {
  /** Prefix of Config Sync's metrics. Default `config_sync_` (what Config Sync's collector exports). */
  readonly prefix?: string;
  /** Prefix of driftless's own metrics. Default `driftless_`. */
  readonly ownPrefix?: string;
  /** Where to register. Default: a new registry (never prom-client's global one, so instances never collide). */
  readonly registry?: Registry;
  /**
   * Labels on every series of the registry, e.g. `syncLabels(sync)` in a reconciler. Applies to
   * the whole registry, including metrics registered by others on a registry passed in.
   */
  readonly defaultLabels?: Readonly<Record<string, string>>;
  /**
   * Also export Node's process metrics (process_*, nodejs_*: memory, CPU, event loop lag).
   * Default true for a new registry, false for one passed in (it may have them already).
   */
  readonly processMetrics?: boolean;
}

export interface Metrics
  extends ConfigSyncMetrics, KustomizeMetrics, QueueMetrics, SuspendMetrics, ResourceGroupMetrics {
  readonly registry: Registry;
}

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = options.registry ?? new Registry();
  if (options.defaultLabels !== undefined) registry.setDefaultLabels({ ...options.defaultLabels });
  if (options.processMetrics ?? options.registry === undefined) collectProcessMetrics(registry);
  return {
    registry,
    ...configSyncMetrics(registry, options.prefix ?? "config_sync_"),
    ...kustomizeMetrics(registry, options.prefix ?? "config_sync_"),
    ...resourceGroupMetrics(registry, options.prefix ?? "config_sync_", options.ownPrefix ?? "driftless_"),
    ...queueMetrics(registry, options.ownPrefix ?? "driftless_"),
    ...suspendMetrics(registry, options.ownPrefix ?? "driftless_"),
  };
}

/**
 * The labels Config Sync's collector adds to a reconciler's metrics (its resource attributes),
 * for `defaultLabels` in the process that reconciles one sync.
 */
export function syncLabels(sync: {
  readonly kind: "RootSync" | "RepoSync";
  readonly namespace: string;
  readonly name: string;
}): Readonly<Record<string, string>> {
  return {
    configsync_sync_kind: sync.kind,
    configsync_sync_name: sync.name,
    configsync_sync_namespace: sync.namespace,
  };
}
