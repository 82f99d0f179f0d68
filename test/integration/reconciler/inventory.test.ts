/**
 * The ResourceGroup inventory against the real API server: an unchanged one is known by its
 * metadata alone, a changed one is read again, and what others keep in it survives our writes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Inventory, resourceGroupMapping, type ObjectId, type ResourceStatusEntry } from "@driftless/applier";
import { testNamespace } from "../../support/index.ts";
import { adminClient } from "../kube/support.ts";

const ids = (namespace: string, ...names: string[]): ObjectId[] =>
  names.map((name) => ({ group: "", kind: "ConfigMap", namespace, name }));

const current = (namespace: string, name: string): ResourceStatusEntry => ({
  group: "",
  kind: "ConfigMap",
  namespace,
  name,
  status: "Current",
  sourceHash: "abc1234",
  strategy: "Apply",
  actuation: "Succeeded",
  reconcile: "Succeeded",
});

test("an unchanged ResourceGroup is not read again; a changed one is, and others' status fields are kept", async (t) => {
  const namespace = await testNamespace(t, "inventory");
  const client = await adminClient(t);
  const sync = { kind: "RepoSync", namespace, name: "repo-sync" } as const;
  const inventory = new Inventory(client, sync);

  assert.deepEqual(await inventory.read(), [], "no ResourceGroup yet");
  await inventory.write(ids(namespace, "b", "a"));
  await inventory.writeStatus([current(namespace, "a"), current(namespace, "b")]);

  // Unchanged since we wrote it: one metadata GET, no full read, and no write for the same content.
  const before = client.requests.snapshot();
  assert.deepEqual(await inventory.read(), ids(namespace, "a", "b"));
  await inventory.write(ids(namespace, "a", "b"));
  await inventory.writeStatus([current(namespace, "b"), current(namespace, "a")]);
  const after = client.requests.snapshot();
  assert.equal(after.get - before.get, 1, "an unchanged ResourceGroup was read in full");
  assert.equal(after.update - before.update, 0, "an unchanged ResourceGroup was written");

  // Someone else adds an entry and a condition of their own.
  const stored = await client.get(resourceGroupMapping, namespace, "repo-sync");
  assert.ok(stored !== undefined);
  const spec = stored["spec"] as { resources: ObjectId[] };
  const theirs = await client.replace(resourceGroupMapping, {
    ...stored,
    spec: { ...spec, resources: [...spec.resources, ...ids(namespace, "c")] },
  });
  const status = (stored["status"] ?? {}) as Record<string, unknown>;
  await client.replaceStatus(resourceGroupMapping, {
    ...theirs,
    status: { ...status, conditions: [{ type: "Stalled", status: "False", reason: "Fine", message: "theirs" }] },
  });

  // The next pass sees their entry (so it can be pruned), and their condition survives our status write.
  assert.deepEqual(await inventory.read(), ids(namespace, "a", "b", "c"));
  await inventory.write(ids(namespace, "a", "b"));
  await inventory.writeStatus([current(namespace, "a")]);
  const final = await client.get(resourceGroupMapping, namespace, "repo-sync");
  assert.deepEqual(
    ((final?.["spec"] as { resources: ObjectId[] }).resources ?? []).map((r) => r.name),
    ["a", "b"],
  );
  const finalStatus = final?.["status"] as { conditions?: { type: string }[]; resourceStatuses?: unknown[] };
  assert.deepEqual(
    finalStatus.conditions?.map((c) => c.type),
    ["Stalled"],
  );
  assert.equal(finalStatus.resourceStatuses?.length, 1);
});

test("a write on a stale ResourceGroup is retried on a fresh read (409), not lost", async (t) => {
  const namespace = await testNamespace(t, "inventory-conflict");
  const client = await adminClient(t);
  const sync = { kind: "RepoSync", namespace, name: "repo-sync" } as const;
  const inventory = new Inventory(client, sync);
  await inventory.write(ids(namespace, "a"));

  // Changed behind the inventory's back, without it reading again: its resourceVersion is stale.
  const stored = await client.get(resourceGroupMapping, namespace, "repo-sync");
  assert.ok(stored !== undefined);
  await client.replace(resourceGroupMapping, {
    ...stored,
    metadata: { ...stored.metadata, labels: { ...stored.metadata.labels, team: "platform" } },
  });

  await inventory.write(ids(namespace, "a", "b"));
  const final = await client.get(resourceGroupMapping, namespace, "repo-sync");
  assert.deepEqual(
    ((final?.["spec"] as { resources: ObjectId[] }).resources ?? []).map((r) => r.name),
    ["a", "b"],
  );
  assert.equal(final?.metadata.labels?.["team"], "platform", "the other writer's label was lost");
});

test("writing the same id objects again is settled without a request, unless someone changed the group", async (t) => {
  const namespace = await testNamespace(t, "inventory-same");
  const client = await adminClient(t);
  const inventory = new Inventory(client, { kind: "RepoSync", namespace, name: "repo-sync" });
  const declared = ids(namespace, "a", "b");
  await inventory.write(declared);

  const before = client.requests.snapshot();
  await inventory.write([...declared]); // the same objects, as the next pass over an unchanged source passes them
  const after = client.requests.snapshot();
  assert.equal(after.get + after.update - before.get - before.update, 0, "a request for nothing");

  // Someone else adds an entry: the same ids are no longer what the group holds, so they are written.
  const stored = await client.get(resourceGroupMapping, namespace, "repo-sync");
  assert.ok(stored !== undefined);
  const spec = stored["spec"] as { resources: ObjectId[] };
  await client.replace(resourceGroupMapping, {
    ...stored,
    spec: { ...spec, resources: [...spec.resources, ...ids(namespace, "c")] },
  });
  await inventory.read();
  await inventory.write([...declared]);
  const final = await client.get(resourceGroupMapping, namespace, "repo-sync");
  assert.deepEqual((final?.["spec"] as { resources: ObjectId[] }).resources, declared);
});

test("an inventory emptied of objects writes no resourceStatuses, as Config Sync's omitempty field marshals", async (t) => {
  const namespace = await testNamespace(t, "inventory-empty");
  const client = await adminClient(t);
  const inventory = new Inventory(client, { kind: "RepoSync", namespace, name: "repo-sync" });
  await inventory.write(ids(namespace, "a"));
  await inventory.writeStatus([current(namespace, "a")]);
  await inventory.write([]);
  await inventory.writeStatus([]);
  const status = (await client.get(resourceGroupMapping, namespace, "repo-sync"))?.["status"] as Record<
    string,
    unknown
  >;
  assert.equal("resourceStatuses" in status, false, JSON.stringify(status));
  assert.equal(status["observedGeneration"], 2);
});

test("an inventory with no objects stores a spec without resources, as Config Sync's converter removes the omitempty field", async (t) => {
  const namespace = await testNamespace(t, "inventory-no-ids");
  const client = await adminClient(t);
  const specOf = async (name: string) =>
    (await client.get(resourceGroupMapping, namespace, name))?.["spec"] as Record<string, unknown>;
  // Created with nothing to record (a sync of an empty repository)...
  await new Inventory(client, { kind: "RepoSync", namespace, name: "empty" }).write([]);
  assert.deepEqual(await specOf("empty"), {});
  // ...and emptied after it recorded objects.
  const emptied = new Inventory(client, { kind: "RepoSync", namespace, name: "emptied" });
  await emptied.write(ids(namespace, "a"));
  await emptied.write([]);
  assert.deepEqual(await specOf("emptied"), {});
  assert.deepEqual(await emptied.read(), []);
});
