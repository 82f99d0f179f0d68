/**
 * SIGTERM while the API server takes a write and never answers it (hung, not stopped: the connection stays
 * open, so only the client's 30 s request timeout would end it). The reconciler fails the request itself and
 * exits within the manager's grace before SIGKILL (10 s), leaving the sync's status as it was.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRepoSync, eventually, repoSyncSyncedTo, testNamespace, TestRepo } from "../../support/index.ts";
import { buildReconcilerBundle, spawnBundledReconciler } from "../../support/bundled-reconciler.ts";
import { startApiProxy } from "./api-proxy.ts";

/** The manager's SIGTERM-to-SIGKILL grace in process mode. */
const managerGraceMs = 10_000;

const configMap = (name: string): string =>
  JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { k: "v" } });

test("a reconciler told to stop while the API server holds its write unanswered exits by itself within the grace", async (t) => {
  buildReconcilerBundle();
  const namespace = await testNamespace(t);
  const proxy = await startApiProxy(t);
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", configMap("a"));
  const first = await repo.commit("a");
  await createRepoSync(namespace, repo, { git: { period: "1s" } });
  const reconciler = await spawnBundledReconciler(t, namespace, { args: [`--kubeconfig=${proxy.kubeconfig}`] });
  await repoSyncSyncedTo(namespace, first, { output: reconciler.output });

  // From now on the API server takes the ConfigMap's create and never answers it.
  let release: () => void = () => undefined;
  const never = new Promise<void>((resolve) => (release = resolve));
  t.after(() => release());
  proxy.hold = (r) => (r.method === "POST" && r.path.endsWith("/configmaps") ? never : undefined);
  await repo.write("config/b.yaml", configMap("b"));
  await repo.commit("b");
  await eventually(
    () => proxy.requests.some((r) => r.method === "POST" && r.path.endsWith("/configmaps") && r.status === undefined),
    { timeoutMs: 30_000, what: "the create of b to be held" },
  );
  // A write of the sync's status from the stop on: status written while the apply ran (every 5 s) is the pass's.
  const statusWrites = (from: number): number =>
    proxy.requests.slice(from).filter((r) => r.method !== "GET" && /\/reposyncs\/[^/]+\/status$/.test(r.path)).length;
  const stoppedAt = proxy.requests.length;
  reconciler.child.kill("SIGTERM");
  const timer = setTimeout(() => reconciler.child.kill("SIGKILL"), managerGraceMs);
  const code = await reconciler.exited;
  clearTimeout(timer);
  assert.equal(code, 0, `not a clean exit within ${managerGraceMs} ms: ${reconciler.output().slice(-2000)}`);
  assert.equal(statusWrites(stoppedAt), 0, "a pass cut short by the stop wrote status");
});
