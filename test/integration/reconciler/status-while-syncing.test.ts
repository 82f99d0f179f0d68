/**
 * Status while a commit's apply waits (override.reconcileTimeout, 5 minutes by default): Config Sync's
 * reconciler rewrites status every 5 s while it syncs, so status.source, status.rendering and status.sync
 * name the commit being applied, and its spec, long before the wait ends; Syncing stays True meanwhile.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  createRootSync,
  eventually,
  rootSyncNamespace,
  rootSyncStatus,
  startReconciler,
  testNamespace,
  suffix,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";

test("status names the commit being applied while its apply waits for a Deployment, with Syncing True", async (t) => {
  const namespace = await testNamespace(t, "applying");
  const name = `applying-${suffix()}`;
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/cm.yaml",
    `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: first, namespace: ${namespace}}\n`,
  );
  const first = await repo.commit("a ConfigMap");
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await eventually(async () => (await rootSyncStatus(name))["lastSyncedCommit"] === first, { what: "first synced" });

  // No kubelet here: the Deployment never becomes available, and the pass waits for it.
  await repo.write(
    "config/deployment.yaml",
    `apiVersion: apps/v1
kind: Deployment
metadata: {name: stuck, namespace: ${namespace}}
spec:
  replicas: 1
  selector: {matchLabels: {app: stuck}}
  template:
    metadata: {labels: {app: stuck}}
    spec: {containers: [{name: c, image: registry.invalid/never:1}]}
`,
  );
  const second = await repo.commit("a Deployment that never becomes ready");
  const status = await eventually(
    async () => {
      const current = await rootSyncStatus(name);
      return (current["sync"] as JsonObject | undefined)?.["commit"] === second ? current : undefined;
    },
    { timeoutMs: 30_000, what: "status.sync naming the commit being applied" },
  );
  for (const block of ["source", "rendering", "sync"]) {
    const phase = status[block] as JsonObject;
    assert.equal(phase["commit"], second, `status.${block}.commit`);
    assert.deepEqual(
      phase["gitStatus"],
      { repo: repo.url, revision: "HEAD", branch: repo.branch, dir: "config" },
      `status.${block}.gitStatus`,
    );
  }
  const syncing = (status["conditions"] as JsonObject[]).find((c) => c["type"] === "Syncing");
  assert.equal(syncing?.["status"], "True", "the pass is still waiting");
  assert.equal(syncing["commit"], second);
  assert.equal(status["lastSyncedCommit"], first, "the commit is not synced before its apply ends");
});
