/** One registry with every metric a reconciler records, ready to serve (the manager's: manager.ts). */
import { Registry } from "prom-client";
import { configSyncMetrics, type ConfigSyncMetrics } from "./config-sync.ts";
import { kustomizeMetrics, type KustomizeMetrics } from "./kustomize.ts";
import { collectProcessMetrics } from "./process-metrics.ts";
import { queueMetrics, type QueueMetrics } from "./queue.ts";
import { resourceGroupMetrics, type ResourceGroupMetrics } from "./resource-group.ts";
import { suspendMetrics, type SuspendMetrics } from "./suspend.ts";
import { watchCacheMetrics, type WatchCacheMetrics } from "./watch-cache.ts";

/** Config Sync's resource attribute for the sync's metadata.generation, as its Prometheus exporter names it. */
export const SYNC_GENERATION_LABEL = "configsync_sync_generation";

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
  extends ConfigSyncMetrics, KustomizeMetrics, QueueMetrics, SuspendMetrics, ResourceGroupMetrics, WatchCacheMetrics {
  readonly registry: Registry;
  /**
   * Labels every series with the sync's metadata.generation (`configsync_sync_generation`), beside the
   * default labels: Config Sync's reconciler carries it, so a series says which spec it was recorded under.
   */
  setSyncGeneration(generation: number): void;
}

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = options.registry ?? new Registry();
  const defaultLabels = options.defaultLabels ?? {};
  if (options.defaultLabels !== undefined) registry.setDefaultLabels({ ...defaultLabels });
  if (options.processMetrics ?? options.registry === undefined) collectProcessMetrics(registry);
  return {
    registry,
    // Default labels are applied at scrape time: existing series move to the new value, none is left behind.
    setSyncGeneration: (generation) =>
      registry.setDefaultLabels({ ...defaultLabels, [SYNC_GENERATION_LABEL]: String(generation) }),
    ...configSyncMetrics(registry, options.prefix ?? "config_sync_"),
    ...kustomizeMetrics(registry, options.prefix ?? "config_sync_"),
    ...resourceGroupMetrics(registry, options.prefix ?? "config_sync_", options.ownPrefix ?? "driftless_"),
    ...queueMetrics(registry, options.ownPrefix ?? "driftless_"),
    ...suspendMetrics(registry, options.ownPrefix ?? "driftless_"),
    ...watchCacheMetrics(registry, options.ownPrefix ?? "driftless_"),
  };
}

/**
 * The labels Config Sync's collector adds to a reconciler's metrics (its resource attributes),
 * for `defaultLabels` in the process that reconciles one sync. The fourth, the sync's generation,
 * changes with its spec: `setSyncGeneration`.
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
