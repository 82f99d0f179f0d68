/**
 * The ResourceGroup's status is live, as Config Sync's ResourceGroup controller keeps it: per-object
 * kstatus and the Stalled condition follow the objects between passes, without a new commit;
 * `override.statusMode: disabled` writes none; the group carries Config Sync's labels and annotations.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  createRootSync,
  customApi,
  eventually,
  rootSynced,
  rootSyncNamespace,
  startReconciler,
  suffix,
  testNamespace,
  TestRepo,
  type JsonObject,
  updateRootSyncSpec,
} from "../../support/index.ts";
import { createStatusWidgetCrd, deleteRootSyncAfter, setWidgetConditions } from "../../support/status-widgets.ts";

async function resourceGroup(name: string): Promise<JsonObject> {
  return (await customApi().getNamespacedCustomObject({
    group: "kpt.dev",
    version: "v1alpha1",
    namespace: rootSyncNamespace,
    plural: "resourcegroups",
    name,
  })) as JsonObject;
}

const statusOf = (group: JsonObject): JsonObject => (group["status"] ?? {}) as JsonObject;
const entries = (group: JsonObject): JsonObject[] => (statusOf(group)["resourceStatuses"] ?? []) as JsonObject[];
const condition = (group: JsonObject, type: string): JsonObject | undefined =>
  ((statusOf(group)["conditions"] ?? []) as JsonObject[]).find((c) => c["type"] === type);

test("per-object status and Stalled follow the objects between passes, without a new commit", async (t) => {
  const group = await createStatusWidgetCrd(t, "rgs");
  const namespace = await testNamespace(t, "rgs");
  const name = `rgs-${suffix()}`;
  deleteRootSyncAfter(t, name);
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/widget.yaml",
    JSON.stringify({ apiVersion: `${group}/v1`, kind: "Widget", metadata: { name: "w1", namespace }, spec: {} }),
  );
  const commit = await repo.commit("a widget");
  await createRootSync(name, repo);
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { metricsPort: 0 },
  );
  await rootSynced(name, commit);

  const widgetEntry = async (): Promise<JsonObject | undefined> =>
    entries(await resourceGroup(name)).find((e) => e["kind"] === "Widget");
  const first = await eventually(async () => (await widgetEntry())?.["status"] === "Current" && resourceGroup(name), {
    what: "the Widget entry to be Current",
  });
  assert.equal(condition(first, "Stalled")?.["status"], "False");
  assert.equal(condition(first, "Reconciling")?.["status"], "False");
  const labels = ((first["metadata"] as JsonObject)["labels"] ?? {}) as Record<string, string>;
  const annotations = ((first["metadata"] as JsonObject)["annotations"] ?? {}) as Record<string, string>;
  assert.equal(labels["app.kubernetes.io/managed-by"], "configmanagement.gke.io");
  assert.equal(labels["configsync.gke.io/sync-kind"], "RootSync");
  assert.equal(labels["configsync.gke.io/sync-name"], name);
  assert.equal(labels["configsync.gke.io/sync-namespace"], rootSyncNamespace);
  assert.equal(labels["cli-utils.sigs.k8s.io/inventory-id"], `${rootSyncNamespace}_${name}`);
  assert.equal(annotations["configmanagement.gke.io/managed"], "enabled");
  assert.equal(annotations["configsync.gke.io/status"], "enabled");

  const widgetUid = (
    (await customApi().getNamespacedCustomObject({
      group,
      version: "v1",
      namespace,
      plural: "widgets",
      name: "w1",
    })) as {
      metadata: JsonObject;
    }
  ).metadata["uid"];

  // Not ready: InProgress, reconcile Pending.
  await setWidgetConditions(group, namespace, [{ type: "Ready", status: "False", reason: "Starting" }]);
  const pending = await eventually(
    async () => {
      const entry = await widgetEntry();
      return entry?.["status"] === "InProgress" && entry;
    },
    { what: "the Widget entry to turn InProgress" },
  );
  assert.equal(pending["reconcile"], "Pending");

  // Failed: the group is Stalled, naming it.
  await setWidgetConditions(group, namespace, [{ type: "Stalled", status: "True", reason: "Broken" }]);
  const stalled = await eventually(
    async () => {
      const current = await resourceGroup(name);
      return condition(current, "Stalled")?.["status"] === "True" && current;
    },
    { what: "the ResourceGroup to be Stalled" },
  );
  assert.equal(condition(stalled, "Stalled")?.["reason"], "ComponentFailed");
  assert.match(String(condition(stalled, "Stalled")?.["message"]), /Widget\/.*\/w1/);
  const failed = entries(stalled).find((e) => e["kind"] === "Widget");
  assert.equal(failed?.["reconcile"], "Failed");
  assert.deepEqual(
    ((failed?.["conditions"] ?? []) as JsonObject[]).map((c) => [c["type"], c["reason"]]),
    [["Stalled", "Broken"]],
  );
  // The metrics are recorded just after the status write seen above.
  await eventually(
    async () => {
      const metrics = await (await fetch(`${reconciler.metricsUrl}/metrics`)).text();
      return (
        /driftless_resource_status_count\{[^}]*status="Failed"[^}]*\} 1/.test(metrics) &&
        /config_sync_ready_resource_count\{[^}]*\} 0/.test(metrics)
      );
    },
    { what: "one Failed and no ready resources in /metrics" },
  );

  // Ready again: Current, Stalled False.
  await setWidgetConditions(group, namespace, [{ type: "Ready", status: "True", reason: "Ready" }]);
  await eventually(
    async () => {
      const current = await resourceGroup(name);
      const entry = entries(current).find((e) => e["kind"] === "Widget");
      return entry?.["status"] === "Current" && condition(current, "Stalled")?.["status"] === "False";
    },
    { what: "the Widget entry to be Current again" },
  );
  await eventually(
    async () =>
      /config_sync_ready_resource_count\{[^}]*\} 1/.test(
        await (await fetch(`${reconciler.metricsUrl}/metrics`)).text(),
      ),
    { what: "one ready resource in /metrics" },
  );
  // Deleted, then re-created by drift correction: NotFound does not stick.
  await customApi().deleteNamespacedCustomObject({ group, version: "v1", namespace, plural: "widgets", name: "w1" });
  await eventually(
    async () => {
      const current = await resourceGroup(name);
      const entry = entries(current).find((e) => e["kind"] === "Widget");
      const uid = await customApi()
        .getNamespacedCustomObject({ group, version: "v1", namespace, plural: "widgets", name: "w1" })
        .then((w) => ((w as JsonObject)["metadata"] as JsonObject)["uid"])
        .catch(() => undefined);
      return uid !== undefined && uid !== widgetUid && entry?.["status"] === "Current";
    },
    { what: "the re-created Widget's entry to be Current" },
  );

  // No new commit: the status followed the watch (a poll of an unchanged commit applies nothing).
  assert.equal((await rootSynced(name, commit))["lastSyncedCommit"], commit);
});

test("override.statusMode: disabled leaves the ResourceGroup an empty status (observedGeneration 0), as Config Sync's controller writes it", async (t) => {
  const namespace = await testNamespace(t, "rgs");
  const name = `rgs-${suffix()}`;
  deleteRootSyncAfter(t, name);
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/cm.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "one", namespace }, data: { a: "1" } }),
  );
  const commit = await repo.commit("a config map");
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, commit);
  await eventually(async () => entries(await resourceGroup(name)).length === 1, {
    what: "one resource status while status is enabled",
  });

  // Disabling it removes what was written, as Config Sync does.
  await updateRootSyncSpec(name, (spec) => ({
    ...spec,
    override: { ...(spec["override"] as JsonObject), statusMode: "disabled" },
  }));
  const group = await eventually(
    async () => {
      const current = await resourceGroup(name);
      const annotations = ((current["metadata"] as JsonObject)["annotations"] ?? {}) as Record<string, string>;
      return (
        annotations["configsync.gke.io/status"] === "disabled" &&
        statusOf(current)["resourceStatuses"] === undefined &&
        current
      );
    },
    { what: "the ResourceGroup to say its status is disabled and hold no per-object status" },
  );
  // Config Sync's controller writes an empty status: no conditions, observedGeneration 0.
  assert.deepEqual(statusOf(group), { observedGeneration: 0 });
  assert.equal(((group["spec"] as JsonObject)["resources"] as unknown[]).length, 1);

  // A commit synced while disabled records its object in spec only (Config Sync's TestStatusEnabledAndDisabled).
  await repo.write(
    "config/cm2.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "two", namespace }, data: { b: "2" } }),
  );
  await rootSynced(name, await repo.commit("a second config map"));
  const grown = await eventually(
    async () => {
      const current = await resourceGroup(name);
      return ((current["spec"] as JsonObject)["resources"] as unknown[]).length === 2 && current;
    },
    { what: "the ResourceGroup to list both objects" },
  );
  assert.deepEqual(statusOf(grown), { observedGeneration: 0 });

  // Enabled again: the status of every object is back, and the annotation says so.
  await updateRootSyncSpec(name, (spec) => ({
    ...spec,
    override: { ...(spec["override"] as JsonObject), statusMode: "enabled" },
  }));
  await eventually(
    async () => {
      const current = await resourceGroup(name);
      const annotations = ((current["metadata"] as JsonObject)["annotations"] ?? {}) as Record<string, string>;
      return annotations["configsync.gke.io/status"] === "enabled" && entries(current).length === 2;
    },
    { what: "the ResourceGroup to say its status is enabled and hold both objects' status" },
  );
});
