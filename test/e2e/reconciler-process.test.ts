import { test } from "node:test";
import assert from "node:assert/strict";
import { freeLoopbackPort } from "@driftless/local-cluster";
import {
  coreApi,
  createRepoSync,
  eventually,
  repoSyncSyncedTo,
  startPrometheus,
  testNamespace,
  TestRepo,
} from "../support/index.ts";
import { buildReconcilerBundle, spawnBundledReconciler, stopBundledReconciler } from "../support/bundled-reconciler.ts";

test("driftless-reconciler as a process (the bundle): syncs a RepoSync, serves config_sync_ metrics that a real Prometheus scrapes, and exits cleanly on SIGTERM", async (t) => {
  buildReconcilerBundle();
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/a.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" }, data: { k: "v" } }),
  );
  await repo.write(
    "config/b.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "b" }, data: { k: "v" } }),
  );
  const commit = await repo.commit("two config maps");
  await createRepoSync(namespace, repo, { git: { period: "2s" } });

  const metricsPort = await freeLoopbackPort();
  const reconciler = await spawnBundledReconciler(t, namespace, { args: [`--metrics-port=${metricsPort}`] });
  await repoSyncSyncedTo(namespace, commit, { output: reconciler.output });
  assert.deepEqual((await coreApi().readNamespacedConfigMap({ namespace, name: "b" })).data, { k: "v" });

  // Structured logs: every stdout line is a JSON object. The pass logs after it writes the status it was awaited by,
  // and after that status's Event: an API request, which a loaded API server may take seconds to answer.
  await eventually(
    () =>
      reconciler
        .output()
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .some((l) => (JSON.parse(l) as { msg?: string }).msg === "pass finished"),
    { what: "a structured 'pass finished' log line" },
  );

  const health = await fetch(`http://127.0.0.1:${metricsPort}/healthz`);
  assert.equal(health.status, 200);
  const prometheus = await startPrometheus(t, [`127.0.0.1:${metricsPort}`]);
  const series = await eventually(
    async () => {
      const result = await prometheus.query(
        `config_sync_last_sync_timestamp{configsync_sync_namespace="${namespace}"}`,
      );
      return result.length > 0 ? result : undefined;
    },
    { timeoutMs: 30_000, what: "Prometheus to scrape config_sync_last_sync_timestamp" },
  );
  assert.ok(Number(series[0]?.value[1]) > 0);
  const reconciles = await eventually(
    async () => {
      const result = await prometheus.query(
        `sum(config_sync_reconcile_duration_seconds_count{configsync_sync_namespace="${namespace}"})`,
      );
      return result.length > 0 && Number(result[0]?.value[1]) > 0 ? result : undefined;
    },
    { timeoutMs: 30_000, what: "Prometheus to see reconcile durations" },
  );
  assert.ok(Number(reconciles[0]?.value[1]) >= 1);
  const declared = await prometheus.query(`config_sync_declared_resources{configsync_sync_namespace="${namespace}"}`);
  assert.equal(declared[0]?.value[1], "2", "declared_resources does not count the two ConfigMaps");
  // Config Sync's applier records a create as operation="update", and its e2e tests query that.
  const applies = await prometheus.query(
    `sum by (operation) (config_sync_apply_operations_total{configsync_sync_namespace="${namespace}",controller="applier"})`,
  );
  assert.deepEqual(
    applies.map((s) => [s.metric["operation"], s.value[1]]),
    [["update", "2"]],
    "apply_operations_total does not count the two creates as operation=update",
  );

  assert.equal(
    await stopBundledReconciler(reconciler),
    0,
    `the reconciler did not exit cleanly on SIGTERM: ${reconciler.output().slice(-2000)}`,
  );
});
