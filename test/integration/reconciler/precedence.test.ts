/**
 * Precedence as in Config Sync: a RootSync takes over an object a RepoSync manages, never the
 * reverse; the RepoSync reports the conflict (KNV1060) and leaves the object alone.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ManagedAnnotation, inventoryId, managerAnnotationValue } from "@driftless/api";
import {
  coreApi,
  createRepoSync,
  createRootSync,
  customApi,
  eventually,
  type JsonObject,
  repoSyncStatus,
  rootSynced,
  rootSyncNamespace,
  startReconciler,
  suffix,
  testNamespace,
  TestRepo,
} from "../../support/index.ts";

function configMap(namespace: string, from: string): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "shared", namespace },
    data: { from },
  });
}

const syncErrors = (status: JsonObject): JsonObject[] =>
  ((status["sync"] as JsonObject | undefined)?.["errors"] ?? []) as JsonObject[];

async function resourceGroup(namespace: string, name: string): Promise<JsonObject> {
  return (await customApi().getNamespacedCustomObject({
    group: "kpt.dev",
    version: "v1alpha1",
    namespace,
    plural: "resourcegroups",
    name,
  })) as JsonObject;
}

async function sharedConfigMap(namespace: string): Promise<JsonObject> {
  return (await coreApi().readNamespacedConfigMap({ namespace, name: "shared" })) as unknown as JsonObject;
}

const annotationsOf = (object: JsonObject): Record<string, string> =>
  ((object["metadata"] as JsonObject)["annotations"] ?? {}) as Record<string, string>;

test("a RootSync takes over an object a RepoSync manages; the RepoSync reports KNV1060 and does not fight", async (t) => {
  const namespace = await testNamespace(t, "prec");
  const repoSource = await TestRepo.create(t);
  await repoSource.write("config/cm.yaml", configMap(namespace, "repo"));
  const repoCommit = await repoSource.commit("the RepoSync declares the ConfigMap");
  await createRepoSync(namespace, repoSource);
  const repoReconciler = await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" });
  await eventually(async () => (await repoSyncStatus(namespace))["lastSyncedCommit"] === repoCommit, {
    what: "the RepoSync to sync",
  });
  assert.equal(annotationsOf(await sharedConfigMap(namespace))[ManagedAnnotation.Manager], namespace);

  const rootName = `prec-${suffix()}`;
  t.after(() =>
    customApi()
      .deleteNamespacedCustomObject({
        group: "configsync.gke.io",
        version: "v1beta1",
        namespace: rootSyncNamespace,
        plural: "rootsyncs",
        name: rootName,
      })
      .catch(() => undefined),
  );
  const rootSource = await TestRepo.create(t);
  await rootSource.write("config/cm.yaml", configMap(namespace, "root"));
  const rootCommit = await rootSource.commit("the RootSync declares the same ConfigMap");
  await createRootSync(rootName, rootSource);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name: rootName });

  // The RootSync syncs without error: it took the object over.
  await rootSynced(rootName, rootCommit);
  const taken = await sharedConfigMap(namespace);
  assert.equal(
    annotationsOf(taken)[ManagedAnnotation.Manager],
    managerAnnotationValue("RootSync", rootSyncNamespace, rootName),
  );
  assert.equal(annotationsOf(taken)[ManagedAnnotation.OwningInventory], inventoryId(rootSyncNamespace, rootName));
  assert.deepEqual(taken["data"], { from: "root" });

  // The RepoSync reports the conflict on its status...
  const errors = await eventually(
    async () => {
      const found = syncErrors(await repoSyncStatus(namespace)).filter((e) => e["code"] === "1060");
      return found.length > 0 ? found : undefined;
    },
    { timeoutMs: 60_000, what: "the RepoSync to report KNV1060" },
  );
  const rootManager = managerAnnotationValue("RootSync", rootSyncNamespace, rootName);
  assert.ok(
    String(errors[0]?.["errorMessage"]).includes(
      `The "${namespace}" reconciler detected a management conflict with the "${rootManager}" reconciler. ` +
        "Remove the object from one of the sources of truth so that the object is only managed by one reconciler." +
        // The object as Config Sync's body prints it: its file from the repository root, namespace, name, type.
        `\n\nsource: config/cm.yaml\nnamespace: ${namespace}\nmetadata.name: shared\ngroup:\nversion: v1\nkind: ConfigMap`,
    ),
    String(errors[0]?.["errorMessage"]),
  );
  // ...and its ResourceGroup says another inventory owns the object.
  await eventually(
    async () => {
      const group = await resourceGroup(namespace, "repo-sync");
      const entries = ((group["status"] as JsonObject | undefined)?.["resourceStatuses"] ?? []) as JsonObject[];
      const entry = entries.find((e) => e["name"] === "shared");
      const conditions = (entry?.["conditions"] ?? []) as JsonObject[];
      return conditions.some((c) => c["type"] === "OwnershipOverlap" && c["status"] === "True");
    },
    { what: "OwnershipOverlap on the RepoSync's ResourceGroup entry" },
  );

  // ...and does not fight: over several more RepoSync passes the object does not change again.
  const settled = await sharedConfigMap(namespace);
  const version = (settled["metadata"] as JsonObject)["resourceVersion"];
  const passes = repoReconciler.passCount;
  await repoReconciler.trigger("drift", "test: one more pass");
  await eventually(() => repoReconciler.passCount >= passes + 3, {
    timeoutMs: 60_000,
    what: "three more RepoSync passes",
  });
  const after = await sharedConfigMap(namespace);
  assert.equal((after["metadata"] as JsonObject)["resourceVersion"], version, "the RepoSync wrote the object again");
  assert.equal(
    annotationsOf(after)[ManagedAnnotation.Manager],
    managerAnnotationValue("RootSync", rootSyncNamespace, rootName),
  );
  assert.ok(
    syncErrors(await repoSyncStatus(namespace)).some((e) => e["code"] === "1060"),
    "the RepoSync stopped reporting the conflict",
  );
});

test("a RepoSync never takes over an object a RootSync manages", async (t) => {
  const namespace = await testNamespace(t, "prec");
  const rootName = `prec-${suffix()}`;
  t.after(() =>
    customApi()
      .deleteNamespacedCustomObject({
        group: "configsync.gke.io",
        version: "v1beta1",
        namespace: rootSyncNamespace,
        plural: "rootsyncs",
        name: rootName,
      })
      .catch(() => undefined),
  );
  const rootSource = await TestRepo.create(t);
  await rootSource.write("config/cm.yaml", configMap(namespace, "root"));
  const rootCommit = await rootSource.commit("the RootSync declares the ConfigMap");
  await createRootSync(rootName, rootSource);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name: rootName });
  await rootSynced(rootName, rootCommit);
  const before = await sharedConfigMap(namespace);

  const repoSource = await TestRepo.create(t);
  await repoSource.write("config/cm.yaml", configMap(namespace, "repo"));
  await repoSource.commit("the RepoSync declares the same ConfigMap");
  await createRepoSync(namespace, repoSource);
  await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" });
  await eventually(async () => syncErrors(await repoSyncStatus(namespace)).some((e) => e["code"] === "1060"), {
    timeoutMs: 60_000,
    what: "the RepoSync to report KNV1060",
  });
  const after = await sharedConfigMap(namespace);
  assert.equal(
    (after["metadata"] as JsonObject)["resourceVersion"],
    (before["metadata"] as JsonObject)["resourceVersion"],
  );
  assert.deepEqual(after["data"], { from: "root" });
});
