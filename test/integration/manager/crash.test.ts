/**
 * Crashes in the middle of a sync: the manager and a reconciler die by SIGKILL while the
 * reconciler applies a commit. Nothing is stored only in a process: after a restart everything
 * converges to Git, nothing declared is lost, and nothing undeclared is deleted.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { eventually, suffix, TestRepo } from "../../support/index.ts";
import { grantRepoSyncReconciler } from "../../support/rbac.ts";
import {
  admin,
  conditionOf,
  configMap,
  createNamespace,
  createSync,
  getObject,
  getSync,
  Mapping,
  reconcilerLog,
  reconcilerPids,
  repoSyncObject,
  rootSyncObject,
  startManager,
  synced,
  systemNamespace,
} from "./helpers.ts";

test("after SIGKILL of the manager and of a reconciler mid-sync, a restarted manager converges with nothing lost or wrongly deleted", async (t) => {
  const first = await startManager(t);
  const namespace = await createNamespace(t, "crash");
  await grantRepoSyncReconciler(namespace);
  const rootTarget = await createNamespace(t, "crash-root");
  const repo = await TestRepo.create(t);
  const v1 = Array.from({ length: 60 }, (_, i) => `cm-${i}`);
  for (const name of v1) await repo.write(`ns/${name}.yaml`, configMap(name, undefined, { version: "1" }));
  await repo.write("root/root-cm.yaml", configMap("root-cm", rootTarget, { owner: "root" }));
  const c1 = await repo.commit("v1");
  const rootName = `root-${suffix()}`;
  await createSync(
    t,
    repoSyncObject(namespace, "repo-sync", first.scope, {
      repo: repo.url,
      branch: repo.branch,
      dir: "ns",
      period: "1s",
    }),
  );
  await createSync(t, rootSyncObject(rootName, first.scope, { repo: repo.url, branch: repo.branch, dir: "root" }));
  await synced("RepoSync", namespace, "repo-sync", c1);
  await synced("RootSync", systemNamespace, rootName, c1);
  const client = await admin();
  // Someone else's object in the same namespace: never ours to delete.
  await client.create(Mapping.ConfigMap, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "not-managed", namespace },
    data: { owner: "someone else" },
  });

  // v2: change the first 20, drop the next 20, add 200 new ones: a pass long enough to be interrupted.
  for (let i = 0; i < 20; i++) await repo.write(`ns/cm-${i}.yaml`, configMap(`cm-${i}`, undefined, { version: "2" }));
  for (let i = 20; i < 40; i++) await repo.remove(`ns/cm-${i}.yaml`);
  const added = Array.from({ length: 200 }, (_, i) => `new-${i}`);
  for (const name of added) await repo.write(`ns/${name}.yaml`, configMap(name, undefined, { version: "2" }));
  const c2 = await repo.commit("v2");
  const midSync = await eventually(
    async () => {
      const sync = await getSync("RepoSync", namespace, "repo-sync");
      const syncing = conditionOf(sync, "Syncing");
      if (syncing?.commit !== c2) return undefined;
      return { caught: syncing.status === "True" };
    },
    { intervalMs: 10, timeoutMs: 30_000, what: "the reconciler working on v2" },
  );
  const [reconciler] = await reconcilerPids(first.scope, "repo-sync");
  first.process.kill("SIGKILL");
  if (reconciler !== undefined) process.kill(reconciler, "SIGKILL");
  await first.exited;
  t.diagnostic(`killed ${midSync.caught ? "while Syncing=True on v2" : "just after v2 was synced"}`);

  // The killed manager's other child (the RootSync's reconciler) notices and exits on its own.
  await eventually(async () => (await reconcilerPids(first.scope)).length === 0, {
    timeoutMs: 45_000,
    what: "the old manager's reconcilers gone",
  });

  const second = await startManager(t, { scope: first.scope });
  await synced("RepoSync", namespace, "repo-sync", c2, 150_000).catch(async (error: unknown) => {
    throw new Error(
      `${String(error)}\n${(await reconcilerLog(first.scope, `ns-reconciler-${namespace}`)).slice(-3000)}`,
    );
  });
  await synced("RootSync", systemNamespace, rootName, c2, 60_000);

  const { items } = await client.list(Mapping.ConfigMap, { namespace });
  const data = new Map(
    items.map((cm) => [cm.metadata.name, (cm["data"] as Record<string, string> | undefined)?.["version"]]),
  );
  for (let i = 0; i < 20; i++) assert.equal(data.get(`cm-${i}`), "2", `cm-${i} not updated`);
  for (let i = 20; i < 40; i++) assert.equal(data.has(`cm-${i}`), false, `cm-${i} not pruned`);
  for (let i = 40; i < 60; i++) assert.equal(data.get(`cm-${i}`), "1", `cm-${i} lost`);
  for (const name of added) assert.equal(data.get(name), "2", `${name} missing`);
  assert.ok(await getObject(Mapping.ConfigMap, namespace, "not-managed"), "an object nobody declared was deleted");
  assert.deepEqual((await getObject(Mapping.ConfigMap, rootTarget, "root-cm"))?.["data"], { owner: "root" });
  // One reconciler per sync again, all children of the new manager.
  await eventually(
    async () =>
      (await reconcilerPids(second.scope, "repo-sync")).length === 1 &&
      (await reconcilerPids(second.scope, rootName)).length === 1,
    {
      what: "exactly one reconciler per sync",
    },
  );
});
