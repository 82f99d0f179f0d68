/**
 * Every metric a process registers carries data: a real manager (process mode, webhook on) and a
 * real reconciler serving /metrics run against the control plane, Redis and git through a sync that
 * succeeds, one that errors (a commit that does not parse), webhook pushes accepted and refused, a
 * reconciler killed and restarted and a sync deleted. A metric whose HELP line is served without a
 * single sample fails the test: registered, never recorded.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import {
  coreApi,
  createRepoSync,
  eventually,
  startReconciler,
  suffix,
  testNamespace,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";
import { grantRepoSyncReconciler } from "../../support/rbac.ts";
import {
  admin,
  cleanUpScope,
  configMap,
  createNamespace,
  createSync,
  Mapping,
  reconcilerPids,
  repoSyncObject,
  startManager,
  synced,
  type RunningManager,
} from "../manager/helpers.ts";
import { fullScrape, samplesOf, scrape, valueOf } from "./scrape.ts";

const secret = `secret-${suffix()}`;

function postPush(manager: RunningManager, payload: object, key: string): Promise<Response> {
  const body = JSON.stringify(payload);
  return fetch(`http://127.0.0.1:${manager.webhookPort}/webhook`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-driftless-signature": `sha256=${createHmac("sha256", key).update(body).digest("hex")}`,
    },
    body,
  });
}

test("every metric the manager and a reconciler register has a sample after a sync, an error, webhook pushes, a restart and a deletion", async (t) => {
  // The manager: one sync that syncs, one whose commit does not parse.
  const manager = await startManager(t, { webhookSecret: secret });
  assert.ok(manager.webhookPort !== undefined);
  const managerUrl = `http://127.0.0.1:${manager.metricsPort}/metrics`;
  const good = await createNamespace(t, "metrics");
  const bad = await createNamespace(t, "metrics");
  await grantRepoSyncReconciler(good);
  await grantRepoSyncReconciler(bad);
  const goodRepo = await TestRepo.create(t);
  await goodRepo.write("cm.yaml", configMap("a", undefined, { v: "1" }));
  const goodCommit = await goodRepo.commit("v1");
  const badRepo = await TestRepo.create(t);
  await badRepo.write("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: [unclosed\n");
  await badRepo.commit("a file that does not parse");
  await createSync(
    t,
    repoSyncObject(good, "repo-sync", manager.scope, { repo: goodRepo.url, branch: goodRepo.branch, period: "10m" }),
  );
  await createSync(t, repoSyncObject(bad, "repo-sync", manager.scope, { repo: badRepo.url, branch: badRepo.branch }));

  // A reconciler serving /metrics (as each reconciler Deployment does): a sync, a drift correction, an error.
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", configMap("a", namespace, { color: "blue" }));
  const first = await repo.commit("one config map");
  await createRepoSync(namespace, repo, { git: { period: "2s" } });
  const reconciler = await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" }, { metricsPort: 0 });
  assert.ok(reconciler.metricsUrl !== undefined);
  const reconcilerUrl = `${reconciler.metricsUrl}/metrics`;
  await eventually(
    async () => {
      const sync = (await (await admin()).get(Mapping.RepoSync, namespace, "repo-sync")) as JsonObject | undefined;
      return (sync?.["status"] as JsonObject | undefined)?.["lastSyncedCommit"] === first;
    },
    { what: "the reconciler's first commit synced" },
  );
  const live = (await coreApi().readNamespacedConfigMap({ namespace, name: "a" })) as unknown as JsonObject;
  await coreApi().replaceNamespacedConfigMap({
    namespace,
    name: "a",
    body: { ...live, data: { color: "red" } } as never,
  });
  await eventually(
    async () =>
      (await coreApi().readNamespacedConfigMap({ namespace, name: "a" })).data?.["color"] === "blue" &&
      samplesOf(await scrape(reconcilerUrl), "config_sync_remediate_duration_seconds").length > 0,
    { timeoutMs: 15_000, what: "the drift corrected" },
  );
  await repo.write("config/bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: [unclosed\n");
  await repo.commit("a file that does not parse");
  await eventually(
    async () =>
      valueOf(await scrape(reconcilerUrl), "config_sync_pipeline_error_observed", { component: "source" }) === 1,
    { timeoutMs: 30_000, what: "the reconciler's source error observed" },
  );
  const reconcilerScrape = await fullScrape(reconcilerUrl, "the reconciler");
  assert.ok(reconcilerScrape.helped.length > 0);
  assert.ok(valueOf(reconcilerScrape, "driftless_queue_jobs", { queue: "sync", state: "waiting" }) !== undefined);

  // Webhook pushes: one a sync follows, one none does, one wrongly signed.
  await synced("RepoSync", good, "repo-sync", goodCommit);
  assert.equal((await postPush(manager, { repo: goodRepo.url, branch: goodRepo.branch }, secret)).status, 202);
  assert.equal(
    (await postPush(manager, { repo: "https://example.invalid/other.git", branch: "main" }, secret)).status,
    202,
  );
  assert.equal((await postPush(manager, { repo: goodRepo.url, branch: goodRepo.branch }, "wrong")).status, 401);

  // A reconciler that dies is restarted, and counted.
  const goodSync = {
    configsync_sync_kind: "RepoSync",
    configsync_sync_namespace: good,
    configsync_sync_name: "repo-sync",
  };
  const restarts = async (): Promise<number | undefined> =>
    valueOf(await scrape(managerUrl), "driftless_reconciler_restarts_total", goodSync);
  await eventually(async () => (await restarts()) === 0, { timeoutMs: 30_000, what: "both reconcilers supervised" });
  const pids = await reconcilerPids(manager.scope);
  assert.ok(pids.length > 0, "no reconciler process found");
  for (const victim of pids) process.kill(victim, "SIGKILL");
  await eventually(async () => (await restarts()) === 1, { timeoutMs: 30_000, what: "the restart counted" });

  // A sync deleted: the manager tears its reconciler down and removes its finalizer.
  await (await admin()).delete(Mapping.RepoSync, bad, "repo-sync");
  await eventually(
    async () =>
      (valueOf(await scrape(managerUrl), "driftless_finalizer_removals_total", { reason: "teardown" }) ?? 0) >= 1,
    { timeoutMs: 30_000, what: "the deleted sync's finalizer removal counted" },
  );
  const managerScrape = await fullScrape(managerUrl, "the manager");
  assert.deepEqual(
    managerScrape.helped.filter((name) => name.startsWith("config_sync_")),
    ["config_sync_reconcile_duration_seconds"],
    "the manager registers only the Config Sync metric Config Sync's manager records",
  );
  const expect = (name: string, labels: Record<string, string>, atLeast = 1): void => {
    const value = valueOf(managerScrape, name, labels) ?? -1;
    assert.ok(value >= atLeast, `${name}${JSON.stringify(labels)} is ${value}, expected at least ${atLeast}`);
  };
  expect("driftless_webhook_requests_total", { provider: "generic", result: "matched" });
  expect("driftless_webhook_requests_total", { provider: "generic", result: "unmatched" });
  expect("driftless_webhook_requests_total", { provider: "generic", result: "unauthorized" });
  expect("config_sync_reconcile_duration_seconds_count", { status: "success" });
  expect("driftless_job_duration_seconds_count", { queue: "manager", result: "success" });
  expect("driftless_reconcilers", { state: "running" }, 0);
  expect("driftless_queue_jobs", { queue: "manager", state: "waiting" }, 0);
  assert.equal(
    valueOf(managerScrape, "driftless_reconciler_restarts_total", { configsync_sync_namespace: bad }),
    undefined,
    "a deleted sync's restart series stays behind",
  );

  // Stopped here rather than by startManager's hook: after hooks run in the order registered, and the
  // scope's state folder (registered first) would be removed under reconcilers still writing to it.
  await cleanUpScope(manager.scope);
  await manager.stop();
});
