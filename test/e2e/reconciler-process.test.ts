import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { reconcilerEnvironment, reconcilerNodeFlags } from "@driftless/controller";
import { findRepoRoot, freeLoopbackPort } from "@driftless/local-cluster";
import {
  coreApi,
  createRepoSync,
  customApi,
  eventually,
  startPrometheus,
  suffix,
  testEnv,
  testNamespace,
  TestRepo,
  type JsonObject,
} from "../support/index.ts";

// The production form: the bundle (rebuilt here, so it is never stale) with the flags and environment the
// manager gives every reconciler.
const reconcilerMain = join(findRepoRoot(), "dist", "driftless-reconciler.mjs");

test("driftless-reconciler as a process (the bundle): syncs a RepoSync, serves config_sync_ metrics that a real Prometheus scrapes, and exits cleanly on SIGTERM", async (t) => {
  execFileSync(process.execPath, [join(findRepoRoot(), "scripts", "bundle.ts")], { stdio: "inherit" });
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

  const cacheDir = await mkdtemp(join(tmpdir(), "driftless-e2e-"));
  t.after(() => rm(cacheDir, { recursive: true, force: true }));
  const metricsPort = await freeLoopbackPort();
  const child = spawn(
    process.execPath,
    [
      ...reconcilerNodeFlags(),
      reconcilerMain,
      "--sync-kind=RepoSync",
      "--sync-name=repo-sync",
      `--sync-namespace=${namespace}`,
      `--kubeconfig=${testEnv().kubeconfig}`,
      `--queue-prefix=e2e${suffix()}`,
      `--metrics-port=${metricsPort}`,
      `--cache-dir=${cacheDir}`,
      "--allow-file-repos",
    ],
    // The password in the environment, as the manager gives it (a flag would show in `ps`).
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...reconcilerEnvironment, REDIS_URL: testEnv().redisUrl },
    },
  );
  const output: string[] = [];
  child.stdout.on("data", (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  t.after(() => {
    if (child.exitCode === null) child.kill("SIGKILL");
  });

  await eventually(
    async () => {
      const sync = (await customApi().getNamespacedCustomObject({
        group: "configsync.gke.io",
        version: "v1beta1",
        namespace,
        plural: "reposyncs",
        name: "repo-sync",
      })) as JsonObject;
      return (sync["status"] as JsonObject | undefined)?.["lastSyncedCommit"] === commit;
    },
    { timeoutMs: 30_000, what: `the process to sync ${commit.slice(0, 7)} (output: ${output.join("").slice(-2000)})` },
  );
  assert.deepEqual((await coreApi().readNamespacedConfigMap({ namespace, name: "b" })).data, { k: "v" });

  // Structured logs: every stdout line is a JSON object.
  const lines = output
    .join("")
    .split("\n")
    .filter((l) => l.startsWith("{"));
  assert.ok(
    lines.some((l) => (JSON.parse(l) as { msg?: string }).msg === "pass finished"),
    "no structured 'pass finished' log line",
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
  const creates = await prometheus.query(
    `sum(config_sync_apply_operations_total{configsync_sync_namespace="${namespace}",operation="create",controller="applier"})`,
  );
  assert.equal(creates[0]?.value[1], "2", "apply_operations_total does not count the two creates");

  child.kill("SIGTERM");
  assert.equal(await exited, 0, `the reconciler did not exit cleanly on SIGTERM: ${output.join("").slice(-2000)}`);
});
