/**
 * A RootSync outside config-management-system gets no reconciler (Stalled). Its reconciler's name does
 * not carry its namespace, so it is the name of the real RootSync's of the same name: whoever may create
 * and delete RootSyncs in some namespace must not be able to tear the real one's reconciler down.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { eventually } from "../../support/index.ts";
import {
  admin,
  conditionOf,
  createNamespace,
  createSync,
  getSync,
  Mapping,
  reconcilerPids,
  rootSyncObject,
  startManager,
  synced,
  syncedRootSync,
  systemNamespace,
  configMap,
} from "./helpers.ts";

test("deleting a RootSync outside config-management-system leaves the real RootSync of the same name and its reconciler alone", async (t) => {
  const manager = await startManager(t);
  const { name, repo, target } = await syncedRootSync(t, manager, { namespacePrefix: "real", object: "kept" });
  const [pid] = await reconcilerPids(manager.scope, name);
  assert.ok(pid !== undefined, "the real RootSync's reconciler runs");

  const elsewhere = await createNamespace(t, "elsewhere");
  const misplaced = rootSyncObject(name, manager.scope, { repo: repo.url, branch: repo.branch });
  await createSync(t, { ...misplaced, metadata: { ...misplaced.metadata, namespace: elsewhere } });
  await eventually(async () => conditionOf(await getSync("RootSync", elsewhere, name), "Stalled")?.status === "True", {
    what: "the misplaced RootSync reported Stalled",
  });

  await (await admin()).delete(Mapping.RootSync, elsewhere, name);
  const handled = (): boolean =>
    manager.logs.some((line) => line.includes("had no reconciler to tear down") && line.includes(elsewhere));
  const running = async (): Promise<boolean> => (await reconcilerPids(manager.scope, name)).includes(pid);
  // Either the manager says it let the deletion go, or it stopped the real reconciler (the defect).
  await eventually(async () => handled() || !(await running()), { what: "the manager to handle the deletion" });
  assert.ok(await running(), "the real RootSync's reconciler was stopped");

  // The real RootSync still syncs.
  await repo.write("kept.yaml", configMap("kept", target, { round: "1" }));
  await synced("RootSync", systemNamespace, name, await repo.commit("round 1"), 60_000);
  assert.deepEqual(await reconcilerPids(manager.scope, name), [pid]);
});
