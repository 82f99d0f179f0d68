/**
 * ResourceGroup entries across a prune that finalizers hold and across a reconciler restart, as Config Sync's
 * inventory and ResourceGroup controller keep them: a pruned object stays tracked with strategy Delete until it is
 * gone, and a restarted reconciler keeps its entries following their objects even when no pass can apply.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  coreApi,
  createRootSync,
  customApi,
  eventually,
  type JsonObject,
  rootSynced,
  rootSyncNamespace,
  rootSyncStatus,
  startReconciler,
  suffix,
  testNamespace,
  TestRepo,
} from "../../support/index.ts";
import { admin, Mapping } from "../manager/helpers.ts";

const hold = "driftless.test/hold";

const configMap = (namespace: string, name: string): string =>
  JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data: { name } });

async function resourceGroup(name: string): Promise<JsonObject> {
  return (await customApi().getNamespacedCustomObject({
    group: "kpt.dev",
    version: "v1alpha1",
    namespace: rootSyncNamespace,
    plural: "resourcegroups",
    name,
  })) as JsonObject;
}

/** The entry of ConfigMap `name` in the group's status.resourceStatuses, and whether spec.resources lists it. */
async function configMapEntry(sync: string, name: string): Promise<{ entry?: JsonObject; listed: boolean }> {
  const group = await resourceGroup(sync);
  const resources = ((group["spec"] as JsonObject | undefined)?.["resources"] ?? []) as JsonObject[];
  const statuses = ((group["status"] as JsonObject | undefined)?.["resourceStatuses"] ?? []) as JsonObject[];
  const entry = statuses.find((e) => e["kind"] === "ConfigMap" && e["name"] === name);
  return { ...(entry === undefined ? {} : { entry }), listed: resources.some((r) => r["name"] === name) };
}

const summary = (entry: JsonObject | undefined): unknown[] =>
  ["strategy", "actuation", "status", "reconcile"].map((key) => entry?.[key]);

async function setFinalizers(namespace: string, name: string, finalizers: string[] | null): Promise<void> {
  await (await admin()).patch(Mapping.ConfigMap, namespace, name, { metadata: { finalizers } }, "merge");
}

test("a pruned object finalizers hold keeps its entry with strategy Delete: Terminating and reconcile Pending, then NotFound and Succeeded once it is gone", async (t) => {
  const namespace = await testNamespace(t, "rg-held");
  const name = `rg-held-${suffix()}`;
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", configMap(namespace, "a"));
  await repo.write("config/b.yaml", configMap(namespace, "b"));
  const first = await repo.commit("a and b");
  // The pass stops waiting for the pruned object after 4 s, as Config Sync's applier does at reconcileTimeout.
  await createRootSync(name, repo, { spec: { override: { reconcileTimeout: "4s" } } });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, first);
  await setFinalizers(namespace, "b", [hold]);
  t.after(() => setFinalizers(namespace, "b", null).catch(() => undefined));

  await repo.remove("config/b.yaml");
  await repo.commit("b leaves Git");
  const held = await eventually(
    async () => {
      const found = await configMapEntry(name, "b");
      return found.entry?.["strategy"] === "Delete" && found.entry["status"] === "Terminating" && found;
    },
    { timeoutMs: 60_000, what: "b's entry to say it is being deleted" },
  );
  assert.ok(held.listed, "b left spec.resources while it is still there");
  assert.deepEqual(summary(held.entry), ["Delete", "Succeeded", "Terminating", "Pending"]);

  await setFinalizers(namespace, "b", null);
  const gone = await eventually(
    async () => {
      const found = await configMapEntry(name, "b");
      return found.entry?.["status"] === "NotFound" && found;
    },
    { timeoutMs: 60_000, what: "b's entry to say it is gone" },
  );
  assert.deepEqual(summary(gone.entry), ["Delete", "Succeeded", "NotFound", "Succeeded"]);
});

test("after a restart onto a commit that cannot be read, the entries still follow their objects: a deleted one turns NotFound", async (t) => {
  const namespace = await testNamespace(t, "rg-restart");
  const name = `rg-restart-${suffix()}`;
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", configMap(namespace, "a"));
  await repo.write("config/b.yaml", configMap(namespace, "b"));
  const first = await repo.commit("a and b");
  await createRootSync(name, repo);
  const before = await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, first);
  await eventually(async () => (await configMapEntry(name, "b")).entry?.["status"] === "Current", {
    what: "b's entry to be Current",
  });
  await before.stop(5_000);

  await repo.write("config/broken.yaml", "kind: ConfigMap\nmetadata: [unclosed\n  name: x\n");
  const broken = await repo.commit("invalid YAML");
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await eventually(
    async () => {
      const source = ((await rootSyncStatus(name))["source"] ?? {}) as JsonObject;
      const errors = (source["errors"] ?? []) as JsonObject[];
      return source["commit"] === broken && errors.some((e) => e["code"] === "1006");
    },
    { timeoutMs: 60_000, what: "the restarted reconciler to report KNV1006 for the broken commit" },
  );

  await coreApi().deleteNamespacedConfigMap({ namespace, name: "b" });
  const gone = await eventually(
    async () => {
      const found = await configMapEntry(name, "b");
      return found.entry?.["status"] === "NotFound" && found;
    },
    { timeoutMs: 30_000, what: "b's entry to say it is gone" },
  );
  // Applied and then gone: Config Sync's controller reports reconcile Failed.
  assert.deepEqual(summary(gone.entry), ["Apply", "Succeeded", "NotFound", "Failed"]);
  assert.equal((await configMapEntry(name, "a")).entry?.["status"], "Current");
});
