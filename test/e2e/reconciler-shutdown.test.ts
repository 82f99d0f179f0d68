/**
 * SIGTERM while a pass waits for what it applied to become Current (`reconcileTimeout`, 5 min by default):
 * the reconciler cuts the wait short and exits by itself within the manager's grace before SIGKILL (10 s;
 * the pod's is 40 s), and a pass cut short writes no status (its reconciler's successor runs it again).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRepoSync, eventually, repoSyncStatus, testNamespace, TestRepo } from "../support/index.ts";
import { grantRepoSyncReconciler } from "../support/rbac.ts";
import { buildReconcilerBundle, spawnBundledReconciler } from "../support/bundled-reconciler.ts";

/** The manager's SIGTERM-to-SIGKILL grace in process mode. */
const managerGraceMs = 10_000;

test("a reconciler told to stop while its pass waits for a Deployment exits by itself within the grace, leaving status as it was", async (t) => {
  buildReconcilerBundle();
  const namespace = await testNamespace(t);
  await grantRepoSyncReconciler(namespace);
  const repo = await TestRepo.create(t);
  // No kubelet runs here: the Deployment never becomes available, so the pass waits.
  await repo.write(
    "config/app.yaml",
    JSON.stringify({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "app" },
      spec: {
        selector: { matchLabels: { app: "app" } },
        template: { metadata: { labels: { app: "app" } }, spec: { containers: [{ name: "app", image: "app:1" }] } },
      },
    }),
  );
  await repo.commit("a Deployment");
  await createRepoSync(namespace, repo);
  const reconciler = await spawnBundledReconciler(t, namespace, { args: ["--log-level=debug"] });
  await eventually(() => /"msg":"pass phase finished"[^\n]*"phase":"apply"/.test(reconciler.output()), {
    timeoutMs: 60_000,
    what: "the pass to apply and start waiting",
  });
  const before = await repoSyncStatus(namespace);

  const stopped = performance.now();
  reconciler.child.kill("SIGTERM");
  const timer = setTimeout(() => reconciler.child.kill("SIGKILL"), managerGraceMs);
  const code = await reconciler.exited;
  clearTimeout(timer);
  assert.equal(code, 0, `not a clean exit within ${managerGraceMs} ms: ${reconciler.output().slice(-2000)}`);
  assert.ok(performance.now() - stopped < managerGraceMs);
  assert.deepEqual(await repoSyncStatus(namespace), before, "a pass cut short by the stop wrote status");
});
