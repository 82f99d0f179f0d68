/**
 * A rename larger than one ResourceGroup's byte budget: the previous objects and the new ones
 * together do not fit in the sync's ResourceGroup, each side alone does. The sync must not wedge,
 * and no object may be forgotten at any point.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Inventory, ResourceGroupByteBudget, resourceGroupMapping, type ObjectId } from "@driftless/applier";
import {
  createRepoSync,
  createRootSync,
  eventually,
  type JsonObject,
  repoSyncStatus,
  rootSynced,
  rootSyncNamespace,
  syncErrorsAt,
  startReconciler,
  suffix,
  testNamespace,
  TestRepo,
} from "../../support/index.ts";
import { adminClient } from "../kube/support.ts";

/** Long names make each inventory entry ~300 bytes, so a few thousand objects fill a group. */
const longName = (prefix: string, i: number): string => `${prefix}-${String(i).padStart(5, "0")}-${"x".repeat(220)}`;

function idsOf(namespace: string, prefix: string, count: number): ObjectId[] {
  return Array.from({ length: count }, (_, i) => ({
    group: "",
    kind: "ConfigMap",
    namespace,
    name: longName(prefix, i),
  }));
}

/** How many such ids make up a bit more than half the budget: two sides overflow, one fits. */
const renameTimeoutMs = 180_000;

function halfAndABit(namespace: string): number {
  const one = JSON.stringify(idsOf(namespace, "old", 1)).length;
  return Math.ceil((ResourceGroupByteBudget * 0.55) / one);
}

const configMaps = { group: "", version: "v1", kind: "ConfigMap", resource: "configmaps", namespaced: true, verbs: [] };

test("an inventory write over the budget keeps the recorded ids and puts the rest in the overflow group, until a write fits", async (t) => {
  const namespace = await testNamespace(t, "overflow");
  const client = await adminClient(t);
  const sync = { kind: "RepoSync", namespace, name: "repo-sync" } as const;
  const count = halfAndABit(namespace);
  const old = idsOf(namespace, "old", count);
  const renamed = idsOf(namespace, "new", count);

  await new Inventory(client, sync).write(old);
  const inventory = new Inventory(client, sync);
  await inventory.write([...old, ...renamed]);
  const keys = (list: readonly ObjectId[]): string[] => list.map((id) => id.name).sort();
  assert.deepEqual(keys(await new Inventory(client, sync).read()), keys([...old, ...renamed]), "an id was forgotten");
  const overflow = await client.get(resourceGroupMapping, namespace, "repo-sync.pending");
  assert.ok(overflow !== undefined, "no overflow group");

  await inventory.write(renamed);
  assert.deepEqual(keys(await new Inventory(client, sync).read()), keys(renamed));
  assert.equal(
    await client.get(resourceGroupMapping, namespace, "repo-sync.pending"),
    undefined,
    "overflow group left",
  );
});

test("a rename whose old and new objects together exceed one ResourceGroup applies, prunes and records the new ones", async (t) => {
  const id = suffix();
  const name = `rename-${id}`;
  const namespace = await testNamespace(t, `rename-${"n".repeat(40)}`);
  const count = halfAndABit(namespace);
  const repo = await TestRepo.create(t);
  const manifest = (prefix: string): string =>
    Array.from({ length: count }, (_, i) =>
      JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: longName(prefix, i), namespace } }),
    ).join("\n---\n");
  await repo.write("config/all.yaml", manifest("old"));
  const first = await repo.commit(`${count} config maps`);
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  // Thousands of objects: on a loaded 2-core machine one pass took 37 s and the rename's over 60 s.
  await rootSynced(name, first, renameTimeoutMs);

  await repo.write("config/all.yaml", manifest("new"));
  const second = await repo.commit("rename every one of them");
  await rootSynced(name, second, renameTimeoutMs);

  const client = await adminClient(t);
  const live = await client.list(
    { group: "", version: "v1", kind: "ConfigMap", resource: "configmaps", namespaced: true, verbs: [] },
    { namespace },
  );
  const names = live.items.map((o) => o.metadata.name).filter((n) => n !== "kube-root-ca.crt");
  assert.equal(names.length, count, "old objects left or new ones missing");
  assert.ok(
    names.every((n) => n.startsWith("new-")),
    "an old object was not pruned",
  );
  const group = await client.get(resourceGroupMapping, rootSyncNamespace, name);
  const recorded = ((group?.["spec"] as { resources?: ObjectId[] } | undefined)?.resources ?? []).map((r) => r.name);
  assert.equal(recorded.length, count);
  assert.equal(await client.get(resourceGroupMapping, rootSyncNamespace, `${name}.pending`), undefined);
});

test("a ResourceGroup named <sync>.pending that is not the sync's own neither stalls it nor is touched by it", async (t) => {
  const namespace = await testNamespace(t, "foreign-pending");
  const client = await adminClient(t);
  // Another party's object with the overflow group's name (or another RepoSync's own group, named repo-sync.pending),
  // without our label, listing an object of the namespace the sync does not declare.
  await client.create(resourceGroupMapping, {
    apiVersion: "kpt.dev/v1alpha1",
    kind: "ResourceGroup",
    metadata: { name: "repo-sync.pending", namespace },
    spec: { resources: [{ group: "", kind: "ConfigMap", namespace, name: "bystander" }] },
  });
  await client.create(configMaps, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "bystander", namespace } });
  const foreign = await client.get(resourceGroupMapping, namespace, "repo-sync.pending");
  assert.ok(foreign !== undefined);

  const repo = await TestRepo.create(t);
  const declared = (name: string): string =>
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace } });
  await repo.write("config/a.yaml", declared("declared-a"));
  const first = await repo.commit("one config map");
  await createRepoSync(namespace, repo);
  await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" });
  await repoSynced(namespace, first);
  // A second commit runs the recording path again (the one that clears an overflow group of its own).
  await repo.write("config/a.yaml", declared("declared-b"));
  const second = await repo.commit("renamed");
  await repoSynced(namespace, second);

  const after = await client.get(resourceGroupMapping, namespace, "repo-sync.pending");
  assert.equal(after?.metadata.resourceVersion, foreign.metadata.resourceVersion, "the foreign group was changed");
  assert.ok((await client.get(configMaps, namespace, "bystander")) !== undefined, "an object it lists was pruned");
  assert.ok((await client.get(configMaps, namespace, "declared-b")) !== undefined);
  assert.equal(await client.get(configMaps, namespace, "declared-a"), undefined, "the renamed object was not pruned");
});

/** The RepoSync synced `commit` with no errors. */
function repoSynced(namespace: string, commit: string): Promise<JsonObject> {
  return eventually(
    async () => {
      const status = await repoSyncStatus(namespace);
      const errors = JSON.stringify([status["source"], status["rendering"], status["sync"]]);
      if (status["lastSyncedCommit"] === commit && !errors.includes("errorMessage")) return status;
      throw new Error(`synced ${String(status["lastSyncedCommit"])}, errors ${errors}`); // said if it never syncs
    },
    { timeoutMs: 60_000, what: `RepoSync ${namespace}/repo-sync synced to ${commit.slice(0, 7)} without errors` },
  );
}

test("a source whose inventory alone exceeds one ResourceGroup is KNV2009 on status.sync in Config Sync's words, nothing is applied, and it syncs once split", async (t) => {
  const name = `too-large-${suffix()}`;
  const namespace = await testNamespace(t, "too-large");
  // A tenth over the budget: neither group can hold it.
  const one = JSON.stringify(idsOf(namespace, "cm", 1)).length;
  const count = Math.ceil((ResourceGroupByteBudget * 1.1) / one);
  const manifest = (n: number): string =>
    Array.from({ length: n }, (_, i) =>
      JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: longName("cm", i), namespace } }),
    ).join("\n---\n");
  const repo = await TestRepo.create(t);
  await repo.write("config/all.yaml", manifest(count));
  const tooMany = await repo.commit(`${count} config maps`);
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });

  const errors = await syncErrorsAt(name, tooMany);
  assert.deepEqual(
    errors.map((e) => e["code"]),
    ["2009"],
  );
  assert.match(
    String(errors[0]?.["errorMessage"]),
    new RegExp(
      `^KNV2009: source repository contains too many resource objects to inventory with a single ResourceGroup: inventory apply failed: ResourceGroup\\.kpt\\.dev, ${rootSyncNamespace}/${name}: .*To mitigate, spread the source objects across multiple repositories`,
    ),
  );
  const client = await adminClient(t);
  const applied = (await client.list(configMaps, { namespace })).items.filter(
    (o) => o.metadata.name !== "kube-root-ca.crt",
  );
  assert.equal(applied.length, 0, "objects were applied without an inventory recording them");

  await repo.write("config/all.yaml", manifest(Math.floor(count / 2)));
  const split = await repo.commit("half of them: the rest goes to another sync");
  await rootSynced(name, split);
});
