/**
 * A reconcile timeout outlives the reconciler that saw it: its successor (the manager starts a new one on every
 * spec change) waits for what is still not Current once, as Config Sync's new reconciler pod does.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  createRootSync,
  eventually,
  rootSyncNamespace,
  rootSyncStatus,
  startReconciler,
  suffix,
  syncErrorsAt,
  testNamespace,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";

const json = (obj: unknown): string => JSON.stringify(obj);

test("a Deployment whose wait timed out is still KNV2009 on status.sync after the reconciler restarts, though the restarted reconciler finds it unchanged", async (t) => {
  const name = `rtr-${suffix()}`;
  const namespace = await testNamespace(t, "rtr");
  const repo = await TestRepo.create(t);
  // No scheduler or kubelet here: a Deployment with a replica never becomes available.
  await repo.write(
    "config/web.yaml",
    json({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: "web" } },
        template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image: "nginx" }] } },
      },
    }),
  );
  const commit = await repo.commit("a deployment that never becomes available");
  await createRootSync(name, repo, { spec: { override: { reconcileTimeout: "3s" } } });
  const identity = { kind: "RootSync", namespace: rootSyncNamespace, name } as const;
  const first = await startReconciler(t, identity);
  const errors = await syncErrorsAt(name, commit);
  assert.match(String(errors[0]?.["errorMessage"]), /reconcile timeout/);
  await first.stop(10_000);

  const second = await startReconciler(t, identity);
  await eventually(() => second.passCount >= 1, { timeoutMs: 60_000, what: "a pass of the new reconciler" });
  const sync = (await rootSyncStatus(name))["sync"] as JsonObject;
  const after = (sync["errors"] ?? []) as JsonObject[];
  assert.equal(after.length, 1, `the timeout was forgotten: ${JSON.stringify(sync)}`);
  assert.match(String(after[0]?.["errorMessage"]), /failed to wait for Deployment\.apps, .*\/web: reconcile timeout/);
});
