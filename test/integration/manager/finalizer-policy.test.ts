/**
 * The reconciler finalizer (`configsync.gke.io/reconciler`) is on every sync whose reconciler runs,
 * whatever its deletion propagation policy, as Config Sync's reconciler adds it: Orphan needs the
 * reconciler at deletion too, to release the objects. An RSync deleted after driftless is gone waits on
 * both finalizers until they are removed by hand, as the uninstall notes say.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Finalizer } from "@driftless/api";
import { eventually, suffix, TestRepo } from "../../support/index.ts";
import {
  admin,
  configMap,
  createNamespace,
  createSync,
  getObject,
  getSync,
  Mapping,
  rootSyncObject,
  startManager,
  synced,
  systemNamespace,
} from "./helpers.ts";

const finalizersOf = async (name: string): Promise<readonly string[]> =>
  (await getSync("RootSync", systemNamespace, name))?.metadata.finalizers ?? [];

test("the reconciler finalizer is added without a deletion propagation policy (Orphan), and added again when removed by hand", async (t) => {
  const manager = await startManager(t);
  const target = await createNamespace(t, "fpol");
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("kept", target, { v: "1" }));
  const commit = await repo.commit("one config map");
  const name = `root-${suffix()}`;
  await createSync(t, rootSyncObject(name, manager.scope, { repo: repo.url, branch: repo.branch }));
  // The reconciler adds the finalizer before its first pass: synced means it is there.
  await synced("RootSync", systemNamespace, name, commit);
  const finalizers = await finalizersOf(name);
  assert.ok(finalizers.includes(Finalizer.ReconcilerManager), "no manager finalizer");
  assert.ok(finalizers.includes(Finalizer.Reconciler), "no reconciler finalizer with Orphan");

  await (
    await admin()
  ).patch(
    Mapping.RootSync,
    systemNamespace,
    name,
    { metadata: { finalizers: [Finalizer.ReconcilerManager] } },
    "merge",
  );
  await eventually(async () => (await finalizersOf(name)).includes(Finalizer.Reconciler), {
    what: "the reconciler finalizer added again by a later pass",
  });
});

test("a RootSync deleted after driftless is stopped goes once its finalizers are removed by hand, as the uninstall notes say", async (t) => {
  const manager = await startManager(t);
  const target = await createNamespace(t, "funi");
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("kept", target, { v: "1" }));
  const commit = await repo.commit("one config map");
  const name = `root-${suffix()}`;
  await createSync(t, rootSyncObject(name, manager.scope, { repo: repo.url, branch: repo.branch }));
  await synced("RootSync", systemNamespace, name, commit);
  assert.equal(await manager.stop(), 0);

  const client = await admin();
  await client.delete(Mapping.RootSync, systemNamespace, name);
  assert.deepEqual(
    [...(await finalizersOf(name))].sort(),
    [Finalizer.Reconciler, Finalizer.ReconcilerManager].sort(),
    "the RootSync is not held by both finalizers",
  );
  await client.patch(Mapping.RootSync, systemNamespace, name, { metadata: { finalizers: null } }, "merge");
  await eventually(async () => (await getSync("RootSync", systemNamespace, name)) === undefined, {
    timeoutMs: 15_000,
    what: "the RootSync gone with its finalizers removed by hand",
  });
  const kept = await getObject(Mapping.ConfigMap, target, "kept");
  assert.ok(kept, "a managed object was deleted");
  assert.equal(kept.metadata.annotations?.["configmanagement.gke.io/managed"], "enabled", "nothing releases it then");
});
