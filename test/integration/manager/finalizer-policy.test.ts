/**
 * The reconciler finalizer (`configsync.gke.io/reconciler`) is held only while a deletion must wait
 * for the reconciler: with Foreground propagation, as Config Sync does. Without it, an RSync deleted
 * after driftless is gone is held by nothing the documented uninstall steps do not remove.
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

const policyAnnotation = "configsync.gke.io/deletion-propagation-policy";

const finalizersOf = async (name: string): Promise<readonly string[]> =>
  (await getSync("RootSync", systemNamespace, name))?.metadata.finalizers ?? [];

test("the reconciler finalizer is held only with Foreground propagation: added when the annotation is set, removed when it is unset", async (t) => {
  const manager = await startManager(t);
  const target = await createNamespace(t, "fpol");
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("kept", target, { v: "1" }));
  const commit = await repo.commit("one config map");
  const name = `root-${suffix()}`;
  await createSync(t, rootSyncObject(name, manager.scope, { repo: repo.url, branch: repo.branch }));
  // The reconciler aligns the finalizer before its first pass: synced means it has decided.
  await synced("RootSync", systemNamespace, name, commit);
  let finalizers = await finalizersOf(name);
  assert.ok(finalizers.includes(Finalizer.ReconcilerManager), "no manager finalizer");
  assert.ok(!finalizers.includes(Finalizer.Reconciler), "a reconciler finalizer without Foreground");

  const client = await admin();
  await client.patch(
    Mapping.RootSync,
    systemNamespace,
    name,
    { metadata: { annotations: { [policyAnnotation]: "Foreground" } } },
    "merge",
  );
  await eventually(async () => (await finalizersOf(name)).includes(Finalizer.Reconciler), {
    what: "the reconciler finalizer added for Foreground",
  });

  await client.patch(
    Mapping.RootSync,
    systemNamespace,
    name,
    { metadata: { annotations: { [policyAnnotation]: null } } },
    "merge",
  );
  await eventually(async () => !(await finalizersOf(name)).includes(Finalizer.Reconciler), {
    what: "the reconciler finalizer removed once the annotation is gone",
  });
  finalizers = await finalizersOf(name);
  assert.ok(finalizers.includes(Finalizer.ReconcilerManager), "the manager finalizer went with it");
});

test("a RootSync deleted after driftless is stopped goes once the manager finalizer is removed by hand, as the uninstall notes say", async (t) => {
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
  await client.patch(
    Mapping.RootSync,
    systemNamespace,
    name,
    {
      metadata: {
        finalizers: ((await getSync("RootSync", systemNamespace, name))?.metadata.finalizers ?? []).filter(
          (f) => f !== Finalizer.ReconcilerManager,
        ),
      },
    },
    "merge",
  );
  await eventually(async () => (await getSync("RootSync", systemNamespace, name)) === undefined, {
    timeoutMs: 15_000,
    what: "the RootSync gone with only the manager finalizer removed",
  });
  assert.ok(await getObject(Mapping.ConfigMap, target, "kept"), "a managed object was deleted without Foreground");
});
