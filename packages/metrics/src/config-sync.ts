/**
 * Config Sync's metrics, with its names, label names and buckets (kpt-config-sync pkg/metrics
 * metrics.go, views.go, tagkeys.go; the ResourceGroup controller's in
 * pkg/resourcegroup/controllers/metrics). Config Sync exports them through an OpenTelemetry
 * collector whose Prometheus namespace is `config_sync`, hence the `config_sync_` prefix: a
 * dashboard or alert written for Config Sync reads driftless unchanged.
 */
import type { Registry } from "prom-client";
import { counter, gauge, histogram, type CounterHandle, type GaugeHandle, type HistogramHandle } from "./handles.ts";
import { inventoryCountMetrics, type InventoryCountMetrics } from "./resource-group.ts";
import {
  COMMIT_NONE,
  type ApiOperation,
  type Controller,
  type ErrorCodeClass,
  type ErrorComponent,
  type InternalErrorSource,
  type Operation,
  type ParserStage,
  type PipelineComponent,
  type ReconcilerType,
  type Status,
  type Trigger,
} from "./labels.ts";

/** Config Sync's distribution bounds, in seconds. */
export const CONFIG_SYNC_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;
/** Config Sync's bounds for long durations (a pass's stages, an apply), in seconds. */
export const CONFIG_SYNC_LONG_BUCKETS = [1, 5, 10, 30, 60, 300, 600, 1200, 1800, 3600, 5400] as const;

/** A "last time X happened" gauge labelled by status and commit, holding only the latest series. */
export interface TimestampHandle {
  readonly name: string;
  /** Records `at` (default now) in Unix seconds; an empty commit is Config Sync's `NONE`. */
  record(labels: { readonly status: Status; readonly commit?: string }, at?: Date): void;
}

export interface ConfigSyncMetrics extends InventoryCountMetrics {
  /** api_duration_seconds{operation,status}: API server call latency. */
  readonly apiDuration: HistogramHandle<{ operation: ApiOperation; status: Status }>;
  /** reconcile_duration_seconds{status}: one pass (or one manager reconcile). */
  readonly reconcileDuration: HistogramHandle<{ status: Status }>;
  /** parser_duration_seconds{status,trigger,source}: the read/parse/update stages of a pass. */
  readonly parserDuration: HistogramHandle<{ status: Status; trigger: Trigger; source: ParserStage }>;
  /** apply_duration_seconds{status,commit}: applying the declared objects (the latest commit's series only). */
  readonly applyDuration: HistogramHandle<{ status: Status; commit: string }>;
  /** remediate_duration_seconds{status}: one drift remediation. */
  readonly remediateDuration: HistogramHandle<{ status: Status }>;
  /** apply_operations_total{operation,status,controller}. */
  readonly applyOperations: CounterHandle<{ operation: Operation; status: Status; controller: Controller }>;
  /** last_sync_timestamp{status,commit}. */
  readonly lastSync: TimestampHandle;
  /** last_apply_timestamp{status,commit}. */
  readonly lastApply: TimestampHandle;
  /** declared_resources{commit}: objects parsed from the source at the latest commit. */
  readonly declaredResources: GaugeHandle<{ commit: string }>;
  /** reconciler_errors{component,errorclass}: errors currently on the sync's status. */
  readonly reconcilerErrors: GaugeHandle<{ component: ErrorComponent; errorclass: ErrorCodeClass }>;
  /** pipeline_error_observed{name,reconciler,component}: 1 while the stage has errors, else 0. */
  readonly pipelineErrorObserved: GaugeHandle<{
    name: string;
    reconciler: ReconcilerType;
    component: PipelineComponent;
  }>;
  /** resource_conflicts_total{commit}: cached and live objects disagreed (the latest commit's series only). */
  readonly resourceConflicts: CounterHandle<{ commit: string }>;
  /** resource_fights_total: another writer keeps changing a managed object (KNV2005). */
  readonly resourceFights: CounterHandle;
  /** internal_errors_total{source}. */
  readonly internalErrors: CounterHandle<{ source: InternalErrorSource }>;
}

function timestamp(registry: Registry, name: string, help: string): TimestampHandle {
  const handle = gauge<{ status: Status; commit: string }>(registry, { name, help, labelNames: ["status", "commit"] });
  // A commit label would otherwise leave one series per commit ever synced: only the latest series of
  // each status is kept (as Config Sync's LastValue per status), so `{status="success"}` still says when
  // the last success was once errors follow it.
  const latest = new Map<Status, string>();
  return {
    name,
    record: (labels, at = new Date()) => {
      const commit = labels.commit === undefined || labels.commit === "" ? COMMIT_NONE : labels.commit;
      const previous = latest.get(labels.status);
      if (previous !== undefined && previous !== commit) handle.remove({ status: labels.status, commit: previous });
      latest.set(labels.status, commit);
      handle.set({ status: labels.status, commit }, Math.floor(at.getTime() / 1_000));
    },
  };
}

/*
 * Config Sync labels these with the commit. A series per commit ever synced would grow without bound
 * in a long-lived process: each keeps the latest commit's series only, and an empty commit is `NONE`.
 */
const commitOf = (commit: string): string => (commit === "" ? COMMIT_NONE : commit);

function onNewCommit(drop: () => void): (commit: string) => string {
  let last: string | undefined;
  return (commit) => {
    const value = commitOf(commit);
    if (last !== undefined && last !== value) drop();
    last = value;
    return value;
  };
}

function latestCommitGauge(handle: GaugeHandle<{ commit: string }>): GaugeHandle<{ commit: string }> {
  const scope = onNewCommit(() => handle.reset());
  return {
    ...handle,
    set: (labels, value) => handle.set({ commit: scope(labels.commit) }, value),
    inc: (labels, value) => handle.inc({ commit: scope(labels.commit) }, value),
    dec: (labels, value) => handle.dec({ commit: scope(labels.commit) }, value),
  };
}

function latestCommitCounter(handle: CounterHandle<{ commit: string }>): CounterHandle<{ commit: string }> {
  const scope = onNewCommit(() => handle.reset());
  return { ...handle, inc: (labels, value) => handle.inc({ commit: scope(labels.commit) }, value) };
}

function latestCommitHistogram<L extends { status: Status; commit: string }>(
  handle: HistogramHandle<L>,
): HistogramHandle<L> {
  const scope = onNewCommit(() => handle.reset());
  const observe = handle.observe as (labels: L, seconds: number) => void;
  return {
    ...handle,
    observe: ((labels: L, seconds: number) =>
      observe({ ...labels, commit: scope(labels.commit) }, seconds)) as HistogramHandle<L>["observe"],
  };
}

export function configSyncMetrics(registry: Registry, prefix: string): ConfigSyncMetrics {
  const n = (name: string): string => `${prefix}${name}`;
  const buckets = CONFIG_SYNC_BUCKETS;
  return {
    apiDuration: histogram(
      registry,
      {
        name: n("api_duration_seconds"),
        help: "Seconds taken by calls to the Kubernetes API server",
        labelNames: ["operation", "status"],
      },
      buckets,
    ),
    reconcileDuration: histogram(
      registry,
      {
        name: n("reconcile_duration_seconds"),
        help: "Seconds taken by one reconcile of a RootSync or RepoSync",
        labelNames: ["status"],
      },
      buckets,
    ),
    parserDuration: histogram(
      registry,
      {
        name: n("parser_duration_seconds"),
        help: "Seconds taken by each stage (read, parse, update) of a reconcile pass",
        labelNames: ["status", "trigger", "source"],
      },
      CONFIG_SYNC_LONG_BUCKETS,
    ),
    applyDuration: latestCommitHistogram(
      histogram<{ status: Status; commit: string }>(
        registry,
        {
          name: n("apply_duration_seconds"),
          help: "Seconds taken to apply the declared objects to the cluster",
          labelNames: ["status", "commit"],
        },
        CONFIG_SYNC_LONG_BUCKETS,
      ),
    ),
    remediateDuration: histogram(
      registry,
      {
        name: n("remediate_duration_seconds"),
        help: "Seconds taken to remediate one drifted object",
        labelNames: ["status"],
      },
      buckets,
    ),
    applyOperations: counter(registry, {
      name: n("apply_operations_total"),
      help: "Create, update, patch and delete calls made to bring objects to their declared state",
      labelNames: ["operation", "status", "controller"],
    }),
    lastSync: timestamp(registry, n("last_sync_timestamp"), "Unix time of the most recent sync from the source"),
    lastApply: timestamp(registry, n("last_apply_timestamp"), "Unix time of the most recent apply"),
    declaredResources: latestCommitGauge(
      gauge<{ commit: string }>(registry, {
        name: n("declared_resources"),
        help: "Objects declared in the source at the last parse",
        labelNames: ["commit"],
      }),
    ),
    reconcilerErrors: gauge(registry, {
      name: n("reconciler_errors"),
      help: "Errors currently reported on the sync's status, by stage and KNV code family",
      labelNames: ["component", "errorclass"],
    }),
    pipelineErrorObserved: gauge(registry, {
      name: n("pipeline_error_observed"),
      help: "1 while a stage of syncing the current commit has errors, otherwise 0",
      labelNames: ["name", "reconciler", "component"],
    }),
    resourceConflicts: latestCommitCounter(
      counter<{ commit: string }>(registry, {
        name: n("resource_conflicts_total"),
        help: "Times the cached and the live state of an object disagreed",
        labelNames: ["commit"],
      }),
    ),
    resourceFights: counter(registry, {
      name: n("resource_fights_total"),
      help: "Times a managed object was found fought over by another writer (KNV2005)",
      labelNames: [],
    }),
    internalErrors: counter(registry, {
      name: n("internal_errors_total"),
      help: "Defensive checks that fired (bugs), by where they fired",
      labelNames: ["source"],
    }),
    ...inventoryCountMetrics(registry, prefix),
  };
}

/** The reconciler_errors `errorclass` of a KNV code: `KNV1021` → `1xxx`. Unknown codes count as internal. */
export function errorCodeClass(code: string): ErrorCodeClass {
  const digit = /^KNV(\d)\d{3}$/.exec(code)?.[1];
  if (digit === "1") return "1xxx";
  if (digit === "2") return "2xxx";
  return "9xxx";
}
