import { test } from "node:test";
import assert from "node:assert/strict";
import { Registry } from "prom-client";
import { createMetrics, syncLabels } from "./create-metrics.ts";

/** The `# TYPE` lines of a registry: metric name → type. */
async function types(registry: Registry): Promise<Map<string, string>> {
  const text = await registry.metrics();
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1] ?? "", m[2] ?? ""]));
}

/** The sample lines of one metric (without # lines). */
async function samples(registry: Registry, name: string): Promise<string[]> {
  const text = await registry.getSingleMetricAsString(name);
  return text.split("\n").filter((line) => line !== "" && !line.startsWith("#"));
}

test("registers Config Sync's metrics under config_sync_ with Config Sync's types", async () => {
  const { registry } = createMetrics({ processMetrics: false });
  const expected: Record<string, string> = {
    config_sync_api_duration_seconds: "histogram",
    config_sync_reconcile_duration_seconds: "histogram",
    config_sync_parser_duration_seconds: "histogram",
    config_sync_apply_duration_seconds: "histogram",
    config_sync_remediate_duration_seconds: "histogram",
    config_sync_apply_operations_total: "counter",
    config_sync_last_sync_timestamp: "gauge",
    config_sync_last_apply_timestamp: "gauge",
    config_sync_declared_resources: "gauge",
    config_sync_reconciler_errors: "gauge",
    config_sync_pipeline_error_observed: "gauge",
    config_sync_resource_conflicts_total: "counter",
    config_sync_resource_fights_total: "counter",
    config_sync_internal_errors_total: "counter",
    config_sync_resource_count: "gauge",
    config_sync_ready_resource_count: "gauge",
    driftless_queue_jobs: "gauge",
    driftless_job_duration_seconds: "histogram",
    driftless_job_failures_total: "counter",
    driftless_watch_undeclared_objects: "gauge",
  };
  const registered = Object.fromEntries(await types(registry));
  assert.deepEqual(Object.fromEntries(Object.keys(expected).map((name) => [name, registered[name]])), expected);
  assert.ok(
    !("driftless_reconcilers" in registered) && !("driftless_webhook_requests_total" in registered),
    "a reconciler registers none of the manager's metrics",
  );
});

test("records series with Config Sync's label names", async () => {
  const m = createMetrics({ processMetrics: false });
  m.applyOperations.inc({ operation: "create", status: "success", controller: "applier" });
  m.applyOperations.inc({ operation: "create", status: "success", controller: "applier" }, 2);
  m.reconcileDuration.observe({ status: "error" }, 0.3);
  m.parserDuration.observe({ status: "success", trigger: "webhook", source: "parse" }, 0.02);
  m.apiDuration.observe({ operation: "list", status: "success" }, 0.004);
  m.remediateDuration.observe({ status: "success" }, 0.01);
  m.applyDuration.observe({ status: "success", commit: "abc" }, 1.5);
  m.declaredResources.set({ commit: "abc" }, 42);
  m.reconcilerErrors.set({ component: "source", errorclass: "2xxx" }, 1);
  m.pipelineErrorObserved.set({ name: "root-reconciler", reconciler: "root-sync", component: "sync" }, 0);
  m.resourceConflicts.inc({ commit: "abc" });
  m.resourceFights.inc();
  m.internalErrors.inc({ source: "differ" });
  m.resourceCount.set({ resourcegroup: "config-management-system/root-sync" }, 10);
  m.readyResourceCount.set({ resourcegroup: "config-management-system/root-sync" }, 9);

  const r = m.registry;
  assert.deepEqual(await samples(r, "config_sync_apply_operations_total"), [
    'config_sync_apply_operations_total{operation="create",status="success",controller="applier"} 3',
  ]);
  assert.ok(
    (await samples(r, "config_sync_reconcile_duration_seconds")).includes(
      'config_sync_reconcile_duration_seconds_bucket{le="0.5",status="error"} 1',
    ),
  );
  assert.ok(
    (await samples(r, "config_sync_reconcile_duration_seconds")).includes(
      'config_sync_reconcile_duration_seconds_bucket{le="0.25",status="error"} 0',
    ),
  );
  assert.ok(
    (await samples(r, "config_sync_parser_duration_seconds")).includes(
      'config_sync_parser_duration_seconds_count{status="success",trigger="webhook",source="parse"} 1',
    ),
  );
  assert.ok(
    (await samples(r, "config_sync_api_duration_seconds")).includes(
      'config_sync_api_duration_seconds_count{operation="list",status="success"} 1',
    ),
  );
  assert.deepEqual(await samples(r, "config_sync_declared_resources"), [
    'config_sync_declared_resources{commit="abc"} 42',
  ]);
  assert.deepEqual(await samples(r, "config_sync_reconciler_errors"), [
    'config_sync_reconciler_errors{component="source",errorclass="2xxx"} 1',
  ]);
  assert.deepEqual(await samples(r, "config_sync_pipeline_error_observed"), [
    'config_sync_pipeline_error_observed{name="root-reconciler",reconciler="root-sync",component="sync"} 0',
  ]);
  assert.deepEqual(await samples(r, "config_sync_resource_conflicts_total"), [
    'config_sync_resource_conflicts_total{commit="abc"} 1',
  ]);
  assert.deepEqual(await samples(r, "config_sync_resource_fights_total"), ["config_sync_resource_fights_total 1"]);
  assert.deepEqual(await samples(r, "config_sync_internal_errors_total"), [
    'config_sync_internal_errors_total{source="differ"} 1',
  ]);
  assert.deepEqual(await samples(r, "config_sync_resource_count"), [
    'config_sync_resource_count{resourcegroup="config-management-system/root-sync"} 10',
  ]);
  assert.deepEqual(await samples(r, "config_sync_ready_resource_count"), [
    'config_sync_ready_resource_count{resourcegroup="config-management-system/root-sync"} 9',
  ]);
});

test("uses Config Sync's histogram buckets: short ones for calls and reconciles, long ones for a pass's stages and the apply", async () => {
  const m = createMetrics({ processMetrics: false });
  m.apiDuration.observe({ operation: "create", status: "success" }, 0.001);
  m.applyDuration.observe({ status: "success", commit: "abc" }, 0.001);
  m.parserDuration.observe({ status: "success", trigger: "poll", source: "read" }, 0.001);
  const bounds = async (name: string): Promise<(string | undefined)[]> =>
    (await samples(m.registry, name))
      .filter((line) => line.includes("_bucket"))
      .map((line) => /le="([^"]+)"/.exec(line)?.[1]);
  const short = ["0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "+Inf"];
  const long = ["1", "5", "10", "30", "60", "300", "600", "1200", "1800", "3600", "5400", "+Inf"];
  assert.deepEqual(await bounds("config_sync_api_duration_seconds"), short);
  assert.deepEqual(await bounds("config_sync_apply_duration_seconds"), long);
  assert.deepEqual(await bounds("config_sync_parser_duration_seconds"), long);
});

test("last sync and last apply keep one series per status: the latest commit, in Unix seconds", async () => {
  const m = createMetrics({ processMetrics: false });
  m.lastSync.record({ status: "success", commit: "aaa" }, new Date("2025-01-01T00:00:00Z"));
  m.lastSync.record({ status: "success", commit: "bbb" }, new Date("2025-01-01T00:00:30Z"));
  m.lastSync.record({ status: "error", commit: "ccc" }, new Date("2025-01-01T00:01:00.900Z"));
  m.lastApply.record({ status: "success" }, new Date("2025-01-01T00:00:00Z"));
  // The last success stays readable after an error: an alert on its age still fires.
  assert.deepEqual(await samples(m.registry, "config_sync_last_sync_timestamp"), [
    'config_sync_last_sync_timestamp{status="success",commit="bbb"} 1735689630',
    'config_sync_last_sync_timestamp{status="error",commit="ccc"} 1735689660',
  ]);
  assert.deepEqual(await samples(m.registry, "config_sync_last_apply_timestamp"), [
    'config_sync_last_apply_timestamp{status="success",commit="NONE"} 1735689600',
  ]);
});

test("a histogram timer observes the elapsed seconds with the labels known at the end", async () => {
  const m = createMetrics({ processMetrics: false });
  const done = m.reconcileDuration.startTimer();
  const seconds = done({ status: "success" });
  assert.ok(seconds >= 0 && seconds < 1);
  assert.ok(
    (await samples(m.registry, "config_sync_reconcile_duration_seconds")).includes(
      'config_sync_reconcile_duration_seconds_count{status="success"} 1',
    ),
  );
});

test("queue metrics: job durations and failures by queue and result", async () => {
  const m = createMetrics({ processMetrics: false });
  m.recordJob({ role: "sync", result: "success", durationSeconds: 2 });
  m.recordJob({ role: "sync", result: "terminal", durationSeconds: 0.1 });
  m.recordJob({ role: "manager", result: "retry", durationSeconds: 0.1 });

  const r = m.registry;
  assert.ok(
    (await samples(r, "driftless_job_duration_seconds")).includes(
      'driftless_job_duration_seconds_count{queue="sync",result="success"} 1',
    ),
  );
  assert.ok(
    (await samples(r, "driftless_job_duration_seconds")).includes(
      'driftless_job_duration_seconds_bucket{le="300",queue="sync",result="success"} 1',
    ),
  );
  assert.deepEqual(await samples(r, "driftless_job_failures_total"), [
    'driftless_job_failures_total{queue="sync",result="terminal"} 1',
    'driftless_job_failures_total{queue="manager",result="retry"} 1',
  ]);
});

test("queue jobs are read from their sources at scrape time, by state, summed per queue; unanswering sources are left out", async () => {
  const m = createMetrics({ processMetrics: false });
  let down = false;
  const a = { depth: async () => ({ waiting: 1, active: 1, delayed: 0 }) };
  const b = {
    depth: async () => {
      if (down) throw new Error("redis down");
      return { waiting: 2, active: 0, delayed: 1 };
    },
  };
  m.watchQueueDepth("sync", a);
  const stopB = m.watchQueueDepth("sync", b);
  const stopManager = m.watchQueueDepth("manager", b);

  assert.deepEqual(await samples(m.registry, "driftless_queue_jobs"), [
    'driftless_queue_jobs{queue="sync",state="waiting"} 3',
    'driftless_queue_jobs{queue="sync",state="active"} 1',
    'driftless_queue_jobs{queue="sync",state="delayed"} 1',
    'driftless_queue_jobs{queue="manager",state="waiting"} 2',
    'driftless_queue_jobs{queue="manager",state="active"} 0',
    'driftless_queue_jobs{queue="manager",state="delayed"} 1',
  ]);
  down = true;
  assert.deepEqual(
    await samples(m.registry, "driftless_queue_jobs"),
    [
      'driftless_queue_jobs{queue="sync",state="waiting"} 1',
      'driftless_queue_jobs{queue="sync",state="active"} 1',
      'driftless_queue_jobs{queue="sync",state="delayed"} 0',
    ],
    "a queue nobody can count must not report a stale number",
  );
  stopB();
  stopManager();
  down = false;
  assert.equal((await samples(m.registry, "driftless_queue_jobs")).length, 3);
});

test("a watched queue's failure counters start at 0, so the first failure is an increase", async () => {
  const m = createMetrics({ processMetrics: false });
  m.watchQueueDepth("sync", { depth: async () => ({ waiting: 0, active: 0, delayed: 0 }) });
  assert.deepEqual(await samples(m.registry, "driftless_job_failures_total"), [
    'driftless_job_failures_total{queue="sync",result="retry"} 0',
    'driftless_job_failures_total{queue="sync",result="terminal"} 0',
    'driftless_job_failures_total{queue="sync",result="stalled"} 0',
  ]);
});

test("default labels go on every series; prefixes are configurable", async () => {
  const m = createMetrics({
    processMetrics: false,
    prefix: "cs_",
    ownPrefix: "dl_",
    defaultLabels: syncLabels({ kind: "RepoSync", namespace: "team-a", name: "repo-sync" }),
  });
  m.declaredResources.set({ commit: "abc" }, 1);
  m.recordJob({ role: "sync", result: "retry", durationSeconds: 1 });
  assert.deepEqual(await samples(m.registry, "cs_declared_resources"), [
    'cs_declared_resources{commit="abc",configsync_sync_kind="RepoSync",configsync_sync_name="repo-sync",configsync_sync_namespace="team-a"} 1',
  ]);
  assert.ok(
    (await samples(m.registry, "dl_job_failures_total"))[0]?.startsWith(
      'dl_job_failures_total{queue="sync",result="retry",configsync_sync_kind="RepoSync"',
    ),
  );
});

test("setSyncGeneration labels every series with configsync_sync_generation, moving existing series to the new value", async () => {
  const m = createMetrics({
    processMetrics: false,
    defaultLabels: syncLabels({ kind: "RootSync", namespace: "config-management-system", name: "root-sync" }),
  });
  m.resourceFights.inc();
  m.setSyncGeneration(1);
  m.setSyncGeneration(2);
  assert.deepEqual(await samples(m.registry, "config_sync_resource_fights_total"), [
    'config_sync_resource_fights_total{configsync_sync_kind="RootSync",configsync_sync_name="root-sync",configsync_sync_namespace="config-management-system",configsync_sync_generation="2"} 1',
  ]);
});

test("a zeroed histogram series is served with no observations", async () => {
  const m = createMetrics({ processMetrics: false });
  m.remediateDuration.zero({ status: "error" });
  assert.ok(
    (await samples(m.registry, "config_sync_remediate_duration_seconds")).includes(
      'config_sync_remediate_duration_seconds_count{status="error"} 0',
    ),
  );
});

test("exports process metrics into a registry of its own, and registers into a given registry", async () => {
  const own = createMetrics();
  assert.ok((await types(own.registry)).has("process_resident_memory_bytes"));
  const registry = new Registry();
  const given = createMetrics({ registry });
  assert.equal(given.registry, registry);
  assert.ok((await types(registry)).has("config_sync_reconcile_duration_seconds"));
  assert.ok(!(await types(registry)).has("process_resident_memory_bytes"));
});

test("two instances never collide (each has its own registry)", () => {
  createMetrics({ processMetrics: false });
  assert.doesNotThrow(() => createMetrics({ processMetrics: false }));
});

// Never called: type-checked only. Each line must fail to compile, or the @ts-expect-error fails.
export function labelsAreTyped(): void {
  const m = createMetrics();
  // @ts-expect-error: "upsert" is not an operation
  m.applyOperations.inc({ operation: "upsert", status: "success", controller: "applier" });
  // @ts-expect-error: a missing label
  m.applyOperations.inc({ operation: "create", status: "success" });
  // @ts-expect-error: object names are not labels
  m.reconcileDuration.observe({ status: "success", name: "my-configmap" }, 1);
  // @ts-expect-error: unlabelled metrics take no labels
  m.declaredResources.set({ status: "success" }, 1);
  // @ts-expect-error: labelled metrics need their labels
  m.jobFailures.inc(1);
}

test("declared_resources, apply_duration_seconds and resource_conflicts_total carry Config Sync's commit label, the latest commit's series only", async () => {
  const m = createMetrics({ processMetrics: false });
  m.declaredResources.set({ commit: "aaa" }, 3);
  m.applyDuration.observe({ status: "success", commit: "aaa" }, 0.2);
  m.resourceConflicts.inc({ commit: "aaa" });
  m.declaredResources.set({ commit: "bbb" }, 4);
  m.applyDuration.observe({ status: "error", commit: "bbb" }, 0.3);
  m.resourceConflicts.inc({ commit: "" });
  assert.deepEqual(await samples(m.registry, "config_sync_declared_resources"), [
    'config_sync_declared_resources{commit="bbb"} 4',
  ]);
  assert.deepEqual(
    (await samples(m.registry, "config_sync_apply_duration_seconds")).filter((l) => l.includes("_count")),
    ['config_sync_apply_duration_seconds_count{status="error",commit="bbb"} 1'],
  );
  assert.deepEqual(await samples(m.registry, "config_sync_resource_conflicts_total"), [
    'config_sync_resource_conflicts_total{commit="NONE"} 1',
  ]);
});
