import { test } from "node:test";
import assert from "node:assert/strict";
import { createManagerMetrics } from "./manager.ts";

async function samples(metrics: ReturnType<typeof createManagerMetrics>, name: string): Promise<string[]> {
  const text = await metrics.registry.getSingleMetricAsString(name);
  return text.split("\n").filter((line) => line !== "" && !line.startsWith("#"));
}

test("the manager registers its own metrics and the one Config Sync metric its manager records, no reconciler's", async () => {
  const m = createManagerMetrics({ processMetrics: false });
  const names = (await m.registry.getMetricsAsJSON()).map((metric) => metric.name).sort();
  assert.deepEqual(names, [
    "config_sync_reconcile_duration_seconds",
    "driftless_finalizer_removals_total",
    "driftless_job_duration_seconds",
    "driftless_job_failures_total",
    "driftless_kube_requests_total",
    "driftless_queue_jobs",
    "driftless_reconciler_restarts_total",
    "driftless_reconcilers",
    "driftless_webhook_requests_total",
  ]);
});

test("reconciler states and finalizer removal reasons start at 0, so every state has a series", async () => {
  const m = createManagerMetrics({ processMetrics: false });
  assert.deepEqual(await samples(m, "driftless_reconcilers"), [
    'driftless_reconcilers{state="starting"} 0',
    'driftless_reconcilers{state="running"} 0',
    'driftless_reconcilers{state="failed"} 0',
    'driftless_reconcilers{state="terminating"} 0',
  ]);
  m.finalizerRemovals.inc({ reason: "teardown" });
  assert.deepEqual(await samples(m, "driftless_finalizer_removals_total"), [
    'driftless_finalizer_removals_total{reason="teardown"} 1',
    'driftless_finalizer_removals_total{reason="namespace-terminating"} 0',
    'driftless_finalizer_removals_total{reason="left-scope"} 0',
  ]);
});

test("restarts are counted per sync, and a deleted sync's series goes; deployment mode registers none", async () => {
  const m = createManagerMetrics({ processMetrics: false });
  const sync = {
    configsync_sync_kind: "RepoSync",
    configsync_sync_name: "repo-sync",
    configsync_sync_namespace: "team-a",
  } as const;
  m.reconcilerRestarts?.inc(sync, 0);
  m.reconcilerRestarts?.inc(sync);
  assert.deepEqual(await samples(m, "driftless_reconciler_restarts_total"), [
    'driftless_reconciler_restarts_total{configsync_sync_kind="RepoSync",configsync_sync_name="repo-sync",configsync_sync_namespace="team-a"} 1',
  ]);
  m.reconcilerRestarts?.remove(sync);
  assert.deepEqual(await samples(m, "driftless_reconciler_restarts_total"), []);

  const deployment = createManagerMetrics({ processMetrics: false, reconcilerRestarts: false });
  assert.equal(deployment.reconcilerRestarts, undefined);
  assert.equal(deployment.registry.getSingleMetric("driftless_reconciler_restarts_total"), undefined);
});

test("webhook requests start at 0 for every provider and result", async () => {
  const m = createManagerMetrics({ processMetrics: false });
  m.webhookRequests.inc({ provider: "github", result: "matched" });
  const lines = await samples(m, "driftless_webhook_requests_total");
  assert.equal(lines.length, 4 * 8);
  assert.ok(lines.includes('driftless_webhook_requests_total{provider="github",result="matched"} 1'));
  assert.ok(lines.includes('driftless_webhook_requests_total{provider="gitlab",result="unauthorized"} 0'));
});
