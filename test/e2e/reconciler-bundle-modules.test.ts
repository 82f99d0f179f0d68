import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { reconcilerEnvironment, reconcilerNodeFlags } from "@driftless/controller";
import { findRepoRoot } from "@driftless/local-cluster";
import { createRepoSync, customApi, eventually, suffix, testEnv, testNamespace, TestRepo } from "../support/index.ts";
import type { JsonObject } from "../support/index.ts";

const reconcilerMain = join(findRepoRoot(), "dist", "driftless-reconciler.mjs");
/** Loaded before the bundle: at exit, writes the built-in modules the process loaded to $MODULE_LIST_FILE. */
const recordModules = `data:text/javascript,${encodeURIComponent(
  'import { writeFileSync } from "node:fs"; process.on("exit", () => writeFileSync(process.env.MODULE_LIST_FILE, process.moduleLoadList.join("\\n")));',
)}`;

test("an idle reconciler from the bundle never loads undici (Node's fetch) nor carries BullMQ's PostgreSQL backend", async (t) => {
  execFileSync(process.execPath, [join(findRepoRoot(), "scripts", "bundle.ts")], { stdio: "inherit" });
  assert.ok(
    !(await readFile(reconcilerMain, "utf8")).includes("BullMQ PostgreSQL backend"),
    "the bundle carries BullMQ's PostgreSQL SQL",
  );
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/a.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" }, data: { k: "v" } }),
  );
  const commit = await repo.commit("a config map");
  await createRepoSync(namespace, repo, { git: { period: "2s" } });
  const dir = await mkdtemp(join(tmpdir(), "driftless-e2e-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const moduleList = join(dir, "modules");
  const child = spawn(
    process.execPath,
    [
      ...reconcilerNodeFlags(),
      `--import=${recordModules}`,
      reconcilerMain,
      "--sync-kind=RepoSync",
      "--sync-name=repo-sync",
      `--sync-namespace=${namespace}`,
      `--kubeconfig=${testEnv().kubeconfig}`,
      `--queue-prefix=e2e${suffix()}`,
      `--cache-dir=${join(dir, "cache")}`,
      "--allow-file-repos",
      "--log-level=debug",
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...reconcilerEnvironment, REDIS_URL: testEnv().redisUrl, MODULE_LIST_FILE: moduleList },
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
  // Idle: polls that find the commit unchanged.
  const idlePolls = (): number => output.join("").split("poll: commit and spec unchanged").length - 1;
  await eventually(() => idlePolls() >= 2, { timeoutMs: 30_000, what: "two polls of the unchanged commit" });
  child.kill("SIGTERM");
  assert.equal(await exited, 0, `the reconciler did not exit cleanly on SIGTERM: ${output.join("").slice(-2000)}`);

  const loaded = (await readFile(moduleList, "utf8")).split("\n");
  // What it does load shows the list is the bundle's: it talks HTTP to the API server.
  assert.ok(loaded.includes("NativeModule http"), `node:http not in ${loaded.length} loaded modules`);
  // Node builds undici (~1.2 MiB of heap) only for fetch and the web socket classes, which driftless never uses.
  assert.ok(!loaded.includes("NativeModule internal/deps/undici/undici"), "undici was loaded");
});
