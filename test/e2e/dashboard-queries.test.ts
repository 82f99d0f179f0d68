/**
 * Every query of manifests/monitoring/driftless-dashboard.json, evaluated by a real Prometheus
 * scraping a running manager (running a reconciler of its own) and a reconciler serving /metrics,
 * after a sync, a new commit and a drift correction: a panel that shows nothing fails the test.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { findRepoRoot } from "@driftless/local-cluster";
import {
  coreApi,
  createRepoSync,
  eventually,
  startPrometheus,
  startReconciler,
  testNamespace,
  TestRepo,
  type JsonObject,
  type PrometheusServer,
} from "../support/index.ts";
import { grantRepoSyncReconciler } from "../support/rbac.ts";
import {
  configMap,
  createNamespace,
  createSync,
  repoSyncObject,
  startManager,
  synced,
} from "../integration/manager/helpers.ts";

interface Panel {
  readonly type: string;
  readonly title: string;
  readonly targets?: readonly { readonly expr: string }[];
}

async function dashboardQueries(): Promise<{ panel: string; expr: string }[]> {
  const file = join(findRepoRoot(), "manifests", "monitoring", "driftless-dashboard.json");
  const dashboard = JSON.parse(await readFile(file, "utf8")) as { panels: Panel[] };
  return dashboard.panels
    .filter((p) => p.type !== "row")
    .flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
}

/** True when the query returns at least one sample with a number a panel can draw (not NaN, not ±Inf). */
async function hasData(prometheus: PrometheusServer, expr: string): Promise<boolean> {
  const result = await prometheus.query(expr);
  return result.some((sample) => Number.isFinite(Number(sample.value[1])));
}

test("every panel query of the Grafana dashboard returns data from a real Prometheus scraping a manager and a reconciler", async (t) => {
  // The manager runs one RepoSync itself (process mode), so "reconcilers by state" counts a running one;
  // its webhook is served, so the webhook panel has its series.
  const manager = await startManager(t, { webhookSecret: "dashboard-test-secret" });
  const managed = await createNamespace(t);
  await grantRepoSyncReconciler(managed);
  const managedRepo = await TestRepo.create(t);
  await managedRepo.write("cm.yaml", configMap("m", undefined, { v: "1" }));
  const managedCommit = await managedRepo.commit("v1");
  await createSync(
    t,
    repoSyncObject(managed, "repo-sync", manager.scope, { repo: managedRepo.url, branch: managedRepo.branch }),
  );

  // A reconciler serving /metrics, as each reconciler Deployment does.
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/a.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace }, data: { k: "v" } }),
  );
  await repo.commit("one config map");
  await createRepoSync(namespace, repo, { git: { period: "2s" } });
  const reconciler = await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" }, { metricsPort: 0 });
  assert.ok(reconciler.metricsUrl !== undefined);
  await synced("RepoSync", managed, "repo-sync", managedCommit);

  const prometheus = await startPrometheus(t, [
    new URL(reconciler.metricsUrl).host,
    `127.0.0.1:${manager.metricsPort}`,
  ]);
  await eventually(
    () => hasData(prometheus, `config_sync_last_sync_timestamp{configsync_sync_namespace="${namespace}"}`),
    {
      timeoutMs: 30_000,
      what: "Prometheus to scrape the reconciler",
    },
  );

  // Activity while Prometheus watches, so rates and latency quantiles have increases to show:
  // a new commit (an apply and a pass) and an object changed behind driftless's back (a correction).
  await repo.write(
    "config/b.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "b", namespace }, data: { k: "v" } }),
  );
  await repo.commit("a second config map");
  await eventually(
    async () => (await coreApi().readNamespacedConfigMap({ namespace, name: "b" })).data?.["k"] === "v",
    {
      timeoutMs: 30_000,
      what: "the second commit applied",
    },
  );
  const live = (await coreApi().readNamespacedConfigMap({ namespace, name: "a" })) as unknown as JsonObject;
  await coreApi().replaceNamespacedConfigMap({
    namespace,
    name: "a",
    body: { ...live, data: { k: "drifted" } } as never,
  });
  await eventually(
    async () => (await coreApi().readNamespacedConfigMap({ namespace, name: "a" })).data?.["k"] === "v",
    {
      timeoutMs: 30_000,
      what: "the drift corrected",
    },
  );

  const queries = await dashboardQueries();
  assert.ok(queries.length >= 10, `only ${queries.length} panel queries found`);
  let empty: string[] = [];
  try {
    await eventually(
      async () => {
        const answers = await Promise.all(queries.map(async (q) => ({ ...q, ok: await hasData(prometheus, q.expr) })));
        empty = answers.filter((a) => !a.ok).map((a) => `${a.panel}: ${a.expr}`);
        return empty.length === 0;
      },
      { timeoutMs: 60_000, what: "every dashboard query to return data" },
    );
  } catch (error) {
    assert.fail(`dashboard queries without data:\n  ${empty.join("\n  ")}\n(${String(error)})`);
  }

  // The same check on a series driftless does not record (a webhook counter) finds nothing: a
  // panel on an invented metric fails this test rather than shipping empty.
  assert.equal(await hasData(prometheus, "sum(rate(driftless_webhook_pushes_total[5m]))"), false);
});
