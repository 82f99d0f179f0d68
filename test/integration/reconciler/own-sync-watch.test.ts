import { test } from "node:test";
import assert from "node:assert/strict";
import { KubeClient } from "@driftless/kube";
import { rsyncMapping } from "@driftless/sync";
import {
  coreApi,
  createRepoSync,
  eventually,
  repoSyncStatus,
  repoSyncSyncedTo,
  startReconciler,
  testEnv,
  testNamespace,
  TestRepo,
} from "../../support/index.ts";

/** The reconciler's GET requests so far (its own config_sync_api_duration_seconds_count). */
async function getRequests(metricsUrl: string): Promise<number> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  return text
    .split("\n")
    .filter((line) => line.startsWith("config_sync_api_duration_seconds_count{") && line.includes('operation="get"'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
}

test("an idle reconciler reads its own RepoSync from a watch, not with a GET at every poll, and still sees a spec change", async (t) => {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/a.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" }, data: { k: "v" } }),
  );
  const first = await repo.commit("a config map");
  await createRepoSync(namespace, repo);
  const reconciler = await startReconciler(
    t,
    { kind: "RepoSync", namespace, name: "repo-sync" },
    { metricsPort: 0, pollPeriodMs: 200 },
  );
  const url = reconciler.metricsUrl;
  assert.ok(url !== undefined);
  await repoSyncSyncedTo(namespace, first);

  // Ten idle polls: each one used to GET the RepoSync.
  const [gets, passes] = [await getRequests(url), reconciler.passCount];
  await eventually(() => reconciler.passCount >= passes + 10, { what: "ten idle polls" });
  assert.equal((await getRequests(url)) - gets, 0, "idle polls read the RepoSync from the API server");

  // A spec change reaches the next pass through the watch: the sync moves to another directory.
  await repo.write(
    "other/b.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "b" }, data: { k: "v" } }),
  );
  const second = await repo.commit("another directory");
  const admin = await KubeClient.fromKubeconfig(testEnv().kubeconfig);
  t.after(() => admin.close());
  await admin.patch(rsyncMapping("RepoSync"), namespace, "repo-sync", { spec: { git: { dir: "other" } } }, "merge");
  // The new commit may be synced from the old directory first; the spec change then follows.
  await eventually(
    async () => {
      const status = (await repoSyncStatus(namespace)) as {
        lastSyncedCommit?: string;
        source?: { gitStatus?: { dir?: string } };
      };
      return status.lastSyncedCommit === second && status.source?.gitStatus?.dir === "other";
    },
    { what: "the commit synced from the directory the new spec names" },
  );
  assert.deepEqual((await coreApi().readNamespacedConfigMap({ namespace, name: "b" })).data, { k: "v" });
});
