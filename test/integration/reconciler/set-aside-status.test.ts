/**
 * Objects of a kind the cluster does not serve are set aside and the rest of the commit is applied, as in
 * Config Sync; what that apply meets is reported for the new commit too, as Config Sync's update writes it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  coreApi,
  createRootSync,
  rootSynced,
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

test("with a kind set aside, status.sync reports the new commit's apply errors and Syncing counts both stages", async (t) => {
  const namespace = await testNamespace(t, "setaside");
  const configMap = (name: string, data: Record<string, string>): string =>
    json({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data });
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", configMap("a", { k: "a" }));
  const first = await repo.commit("a config map");
  const name = `setaside-${suffix()}`;
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, first);

  // A ConfigMap that applies, a Gadget of a group nobody serves, and a ConfigMap the API server refuses.
  await repo.write("config/c.yaml", configMap("c", { k: "c" }));
  await repo.write(
    "config/gadget.yaml",
    json({ apiVersion: `unserved-${suffix()}.driftless.test/v1`, kind: "Gadget", metadata: { name: "g", namespace } }),
  );
  await repo.write("config/bad.yaml", configMap("bad", { "not a valid key!": "x" }));
  const second = await repo.commit("a gadget before its CRD and a refused config map");

  const syncErrors = await syncErrorsAt(name, second);
  assert.deepEqual(
    syncErrors.map((e) => [e["code"], ((e["errorResources"] ?? []) as JsonObject[]).map((r) => r["name"])]),
    [["2009", ["bad"]]],
  );
  const status = await rootSyncStatus(name);
  const source = status["source"] as JsonObject;
  assert.equal(source["commit"], second);
  assert.deepEqual(
    ((source["errors"] ?? []) as JsonObject[]).map((e) => e["code"]),
    ["1021"],
  );
  assert.equal(status["lastSyncedCommit"], first, "a commit with objects set aside is not synced");
  const syncing = ((status["conditions"] ?? []) as JsonObject[]).find((c) => c["type"] === "Syncing");
  assert.deepEqual(
    {
      status: syncing?.["status"],
      reason: syncing?.["reason"],
      message: syncing?.["message"],
      commit: syncing?.["commit"],
      errorSourceRefs: syncing?.["errorSourceRefs"],
      errorSummary: syncing?.["errorSummary"],
    },
    {
      status: "False",
      reason: "Sync",
      message: "Sync Completed",
      commit: second,
      errorSourceRefs: ["status.source.errors", "status.sync.errors"],
      errorSummary: { totalCount: 2, errorCountAfterTruncation: 2 },
    },
  );
  await coreApi().readNamespacedConfigMap({ namespace, name: "c" }); // the rest of the commit was applied
});
