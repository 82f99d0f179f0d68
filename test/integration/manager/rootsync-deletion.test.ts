import { test } from "node:test";
import assert from "node:assert/strict";
import { eventually, suffix, TestRepo } from "../../support/index.ts";
import {
  admin,
  conditionOf,
  configMap,
  createNamespace,
  createSync,
  getObject,
  getSync,
  Mapping,
  reconcilerPids,
  rootSyncObject,
  startManager,
  synced,
  systemNamespace,
} from "./helpers.ts";

const hold = "driftless.test/hold";

test("RootSync deletion with Foreground deletes every managed object before the RootSync disappears", async (t) => {
  const manager = await startManager(t);
  const target = await createNamespace(t, "fg");
  const repo = await TestRepo.create(t);
  const names = ["a", "b", "c"];
  for (const name of names) await repo.write(`${name}.yaml`, configMap(name, target, { name }));
  const commit = await repo.commit("three config maps");
  const rootName = `root-${suffix()}`;
  await createSync(
    t,
    rootSyncObject(
      rootName,
      manager.scope,
      { repo: repo.url, branch: repo.branch },
      { "configsync.gke.io/deletion-propagation-policy": "Foreground" },
    ),
  );
  await synced("RootSync", systemNamespace, rootName, commit);
  const client = await admin();
  // A finalizer of our own holds `b` in Terminating, so the order is observable, not a race.
  await client.patch(Mapping.ConfigMap, target, "b", { metadata: { finalizers: [hold] } }, "merge");
  t.after(() =>
    client.patch(Mapping.ConfigMap, target, "b", { metadata: { finalizers: null } }, "merge").catch(() => undefined),
  );

  await client.delete(Mapping.RootSync, systemNamespace, rootName);
  await eventually(
    async () => (await getObject(Mapping.ConfigMap, target, "b"))?.metadata.deletionTimestamp !== undefined,
    { what: "b being deleted" },
  );
  await eventually(
    async () =>
      (await getObject(Mapping.ConfigMap, target, "a")) === undefined &&
      (await getObject(Mapping.ConfigMap, target, "c")) === undefined,
    { what: "a and c deleted" },
  );
  const waiting = await getSync("RootSync", systemNamespace, rootName);
  assert.ok(
    waiting?.metadata.deletionTimestamp !== undefined,
    "the RootSync went away while a managed object still existed",
  );
  assert.ok(
    waiting.metadata.finalizers?.includes("configsync.gke.io/reconciler"),
    "the RootSync no longer waits for its reconciler",
  );
  assert.equal(
    (await reconcilerPids(manager.scope, rootName)).length,
    1,
    "the reconciler must keep running until it is done",
  );

  // While b stays, the sync says so as Config Sync's finalizer does: a fixed message, each object in errors.
  const failure = await eventually(
    async () => {
      const condition = conditionOf(await getSync("RootSync", systemNamespace, rootName), "ReconcilerFinalizerFailure");
      return condition?.status === "True" ? condition : undefined;
    },
    { timeoutMs: 90_000, what: "ReconcilerFinalizerFailure while b is held" },
  );
  assert.equal(failure.reason, "DestroyFailure");
  assert.equal(failure.message, "Failed to delete managed resource objects");
  const errors = (failure as { errors?: { code: string; errorMessage: string }[] }).errors ?? [];
  assert.deepEqual(
    errors.map((e) => [e.code, e.errorMessage]),
    [["2009", `KNV2009: failed to wait for ConfigMap, ${target}/b: reconcile timeout`]],
  );

  await client.patch(Mapping.ConfigMap, target, "b", { metadata: { finalizers: null } }, "merge");
  await eventually(async () => (await getSync("RootSync", systemNamespace, rootName)) === undefined, {
    timeoutMs: 60_000,
    what: "the RootSync deleted",
  });
  for (const name of names)
    assert.equal(await getObject(Mapping.ConfigMap, target, name), undefined, `${name} outlived the RootSync`);
  await eventually(async () => (await reconcilerPids(manager.scope)).length === 0, {
    what: "the reconciler torn down",
  });
});

test("RootSync deletion with Orphan leaves the managed objects as they are, as Config Sync does (no reconciler finalizer holds it)", async (t) => {
  const manager = await startManager(t);
  const target = await createNamespace(t, "orphan");
  const repo = await TestRepo.create(t);
  await repo.write(
    "a.yaml",
    configMap("a", target, { keep: "me" }, { labels: { app: "demo" }, annotations: { "example.com/note": "user" } }),
  );
  const commit = await repo.commit("one config map");
  const rootName = `root-${suffix()}`;
  await createSync(
    t,
    rootSyncObject(
      rootName,
      manager.scope,
      { repo: repo.url, branch: repo.branch },
      { "configsync.gke.io/deletion-propagation-policy": "Orphan" },
    ),
  );
  await synced("RootSync", systemNamespace, rootName, commit);
  const managed = await getObject(Mapping.ConfigMap, target, "a");
  assert.equal(managed?.metadata.annotations?.["configmanagement.gke.io/managed"], "enabled");

  await (await admin()).delete(Mapping.RootSync, systemNamespace, rootName);
  await eventually(async () => (await getSync("RootSync", systemNamespace, rootName)) === undefined, {
    timeoutMs: 60_000,
    what: "the RootSync deleted",
  });
  const left = await getObject(Mapping.ConfigMap, target, "a");
  assert.ok(left !== undefined, "an orphaned object was deleted");
  assert.deepEqual(left["data"], { keep: "me" });
  assert.equal(left.metadata.annotations?.["configmanagement.gke.io/managed"], "enabled", "an orphan was rewritten");
  assert.equal(left.metadata.labels?.["app"], "demo", "the object's own labels are kept");
  assert.equal(left.metadata.annotations?.["example.com/note"], "user", "the object's own annotations are kept");
});
