/**
 * Config Sync's applier waits for what a pass prunes to be gone before the pass ends (TestUpdateRootSyncGitBranch
 * checks a Namespace the new branch drops is NotFound as soon as the sync reports the branch's commit).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createLogger } from "@driftless/sync";
import {
  coreApi,
  createRootSync,
  eventually,
  type JsonObject,
  rootSynced,
  rootSyncNamespace,
  rootSyncStatus,
  startReconciler,
  statusCode,
  suffix,
  testNamespace,
  TestRepo,
} from "../../support/index.ts";
import { admin, Mapping } from "../manager/helpers.ts";

const hold = "driftless.test/hold";

const configMap = (namespace: string, name: string): string =>
  JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data: { name } });

async function readConfigMap(namespace: string, name: string): Promise<JsonObject | undefined> {
  try {
    return (await coreApi().readNamespacedConfigMap({ namespace, name })) as unknown as JsonObject;
  } catch (error) {
    if (statusCode(error) === 404) return undefined;
    throw error;
  }
}

async function setFinalizers(namespace: string, name: string, finalizers: string[] | null): Promise<void> {
  await (await admin()).patch(Mapping.ConfigMap, namespace, name, { metadata: { finalizers } }, "merge");
}

test("a pass that prunes an object a finalizer holds reports its commit synced only once the object is gone, as Config Sync's applier waits for pruned objects", async (t) => {
  const namespace = await testNamespace(t, "prune-wait");
  const name = `prune-wait-${suffix()}`;
  const repo = await TestRepo.create(t);
  await repo.write("config/held.yaml", configMap(namespace, "held"));
  await repo.write("config/kept.yaml", configMap(namespace, "kept"));
  const first = await repo.commit("held and kept");
  await createRootSync(name, repo);
  const lines: string[] = [];
  await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { log: createLogger({ test: t.name }, { write: (line) => void lines.push(line) }) },
  );
  await rootSynced(name, first);
  await setFinalizers(namespace, "held", [hold]);
  t.after(() => setFinalizers(namespace, "held", null).catch(() => undefined));

  await repo.remove("config/held.yaml");
  const second = await repo.commit("held leaves Git");
  // The pass either says it waits for the held ConfigMap, or reports the commit synced with it still there.
  const seen = await eventually(
    async () => {
      if (lines.some((line) => line.includes("waiting for pruned objects to be deleted"))) return "waiting";
      return (await rootSyncStatus(name))["lastSyncedCommit"] === second ? "synced" : undefined;
    },
    { timeoutMs: 60_000, what: "the pass over the removal to wait or to finish" },
  );
  assert.equal(seen, "waiting", "the commit was reported synced while the pruned ConfigMap was still Terminating");
  const held = await readConfigMap(namespace, "held");
  assert.ok((held?.["metadata"] as JsonObject | undefined)?.["deletionTimestamp"] !== undefined, "held not deleted");
  // Meanwhile the sync says it is syncing that commit, as Config Sync's does while its applier runs.
  const status = await rootSyncStatus(name);
  const syncing = ((status["conditions"] ?? []) as JsonObject[]).find((c) => c["type"] === "Syncing");
  assert.deepEqual([syncing?.["status"], syncing?.["commit"]], ["True", second]);
  assert.equal(status["lastSyncedCommit"], first);

  await setFinalizers(namespace, "held", null);
  const synced = await rootSynced(name, second);
  assert.equal(await readConfigMap(namespace, "held"), undefined);
  assert.deepEqual(((synced["sync"] as JsonObject | undefined)?.["errors"] ?? []) as unknown[], []);
});

test("objects the server removes at once are not read again after their delete: the wait after prune reads only what is held", async (t) => {
  const namespace = await testNamespace(t, "prune-read");
  const name = `prune-read-${suffix()}`;
  const count = 60;
  const repo = await TestRepo.create(t);
  for (let i = 0; i < count; i++) await repo.write(`config/cm-${i}.yaml`, configMap(namespace, `cm-${i}`));
  await repo.write("config/kept.yaml", configMap(namespace, "kept"));
  const first = await repo.commit("60 ConfigMaps and one kept");
  await createRootSync(name, repo);
  const reconciler = await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, first);

  for (let i = 0; i < count; i++) await repo.remove(`config/cm-${i}.yaml`);
  const before = reconciler.client.requests.snapshot();
  const second = await repo.commit("the 60 leave Git");
  await rootSynced(name, second);
  const after = reconciler.client.requests.snapshot();
  assert.equal(after.delete - before.delete, count);
  // Each is read once before its delete (the decision rests on its live annotation); none after, as the
  // server's answer said it was gone. Reading each again would be another 60.
  const gets = after.get - before.get;
  assert.ok(gets < count + count / 2, `${gets} GETs for ${count} pruned objects`);
});
