/**
 * Config Sync's TestConflictingDefinitions_*: two syncs declare one object; once the holder's source drops
 * it, the holder deletes it only if it still owns it, and the other sync, which reported KNV1060 meanwhile,
 * applies its own declaration and clears the error.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { ManagedAnnotation, managerAnnotationValue } from "@driftless/api";
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
  rootSyncStatus,
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

async function shared(namespace: string): Promise<JsonObject | undefined> {
  try {
    return (await coreApi().readNamespacedConfigMap({ namespace, name: "shared" })) as unknown as JsonObject;
  } catch {
    return undefined;
  }
}

const dataOf = (object: JsonObject | undefined): Record<string, string> | undefined =>
  object?.["data"] as Record<string, string> | undefined;

const managerOf = (object: JsonObject | undefined): string | undefined =>
  ((object?.["metadata"] as JsonObject | undefined)?.["annotations"] as Record<string, string> | undefined)?.[
    ManagedAnnotation.Manager
  ];

function deleteRootSyncAfter(t: TestContext, name: string): void {
  t.after(() =>
    customApi()
      .deleteNamespacedCustomObject({
        group: "configsync.gke.io",
        version: "v1beta1",
        namespace: rootSyncNamespace,
        plural: "rootsyncs",
        name,
      })
      .catch(() => undefined),
  );
}

async function reportsConflict(namespace: string, name = "repo-sync"): Promise<void> {
  await eventually(async () => syncErrors(await repoSyncStatus(namespace, name)).some((e) => e["code"] === "1060"), {
    timeoutMs: 60_000,
    what: `${namespace}/${name} to report KNV1060`,
  });
}

test("a RootSync's declaration dropped from Git: it deletes its object and the RepoSync that reported KNV1060 applies its own (RootToNamespace)", async (t) => {
  const namespace = await testNamespace(t, "handover");
  const rootName = `handover-${suffix()}`;
  deleteRootSyncAfter(t, rootName);
  const rootSource = await TestRepo.create(t);
  await rootSource.write("config/cm.yaml", configMap(namespace, "root"));
  await rootSource.write("config/other.yaml", configMap(namespace, "root").replace('"shared"', '"other"'));
  const rootCommit = await rootSource.commit("the RootSync declares the ConfigMap");
  await createRootSync(rootName, rootSource);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name: rootName });
  await rootSynced(rootName, rootCommit);

  const repoSource = await TestRepo.create(t);
  await repoSource.write("config/cm.yaml", configMap(namespace, "repo"));
  const repoCommit = await repoSource.commit("the RepoSync declares the same ConfigMap");
  await createRepoSync(namespace, repoSource);
  await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" });
  await reportsConflict(namespace);
  assert.deepEqual((await shared(namespace))?.["data"], { from: "root" });

  await rootSource.remove("config/cm.yaml");
  const removal = await rootSource.commit("the RootSync drops it");
  await rootSynced(rootName, removal);
  const taken = await eventually(
    async () => {
      const live = await shared(namespace);
      return managerOf(live) === namespace ? live : undefined;
    },
    { timeoutMs: 60_000, what: "the RepoSync to manage the ConfigMap" },
  );
  assert.deepEqual(taken["data"], { from: "repo" });
  await eventually(
    async () => {
      const status = await repoSyncStatus(namespace);
      return status["lastSyncedCommit"] === repoCommit && syncErrors(status).length === 0;
    },
    { timeoutMs: 60_000, what: "the RepoSync to sync its commit without errors" },
  );
});

test("a RepoSync's declaration dropped from Git after a RootSync took the object over: the object stays the RootSync's (NamespaceToRoot)", async (t) => {
  const namespace = await testNamespace(t, "handover");
  const repoSource = await TestRepo.create(t);
  await repoSource.write("config/cm.yaml", configMap(namespace, "repo"));
  await repoSource.write("config/keep.yaml", configMap(namespace, "repo").replace('"shared"', '"keep"'));
  await repoSource.commit("the RepoSync declares the ConfigMap");
  await createRepoSync(namespace, repoSource);
  await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" });
  await eventually(async () => managerOf(await shared(namespace)) === namespace, { what: "the RepoSync to apply" });

  const rootName = `handover-${suffix()}`;
  deleteRootSyncAfter(t, rootName);
  const rootSource = await TestRepo.create(t);
  await rootSource.write("config/cm.yaml", configMap(namespace, "root"));
  const rootCommit = await rootSource.commit("the RootSync declares the same ConfigMap");
  await createRootSync(rootName, rootSource);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name: rootName });
  await rootSynced(rootName, rootCommit);
  await reportsConflict(namespace);

  await repoSource.remove("config/cm.yaml");
  const removal = await repoSource.commit("the RepoSync drops it");
  await eventually(
    async () => {
      const status = await repoSyncStatus(namespace);
      return status["lastSyncedCommit"] === removal && syncErrors(status).length === 0;
    },
    { timeoutMs: 60_000, what: "the RepoSync to sync the removal without errors" },
  );
  const live = await shared(namespace);
  assert.equal(managerOf(live), managerAnnotationValue("RootSync", rootSyncNamespace, rootName));
  assert.deepEqual(live?.["data"], { from: "root" });
});

test("one RepoSync's declaration dropped from Git: it deletes its object and the other RepoSync of the namespace applies its own (NamespaceToNamespace)", async (t) => {
  const namespace = await testNamespace(t, "handover");
  const firstSource = await TestRepo.create(t);
  await firstSource.write("config/cm.yaml", configMap(namespace, "first"));
  await firstSource.write("config/keep.yaml", configMap(namespace, "first").replace('"shared"', '"keep"'));
  await firstSource.commit("the first RepoSync declares the ConfigMap");
  await createRepoSync(namespace, firstSource);
  await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" });
  await eventually(async () => (await shared(namespace)) !== undefined, { what: "the first RepoSync to apply" });

  const secondSource = await TestRepo.create(t);
  await secondSource.write("config/cm.yaml", configMap(namespace, "second"));
  const secondCommit = await secondSource.commit("the second RepoSync declares the same ConfigMap");
  await customApi().createNamespacedCustomObject({
    group: "configsync.gke.io",
    version: "v1beta1",
    namespace,
    plural: "reposyncs",
    body: {
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RepoSync",
      metadata: { name: "second", namespace },
      spec: {
        sourceFormat: "unstructured",
        git: { repo: secondSource.url, branch: secondSource.branch, dir: "config", auth: "none" },
      },
    },
  });
  await startReconciler(t, { kind: "RepoSync", namespace, name: "second" });
  await reportsConflict(namespace, "second");
  assert.deepEqual((await shared(namespace))?.["data"], { from: "first" });

  await firstSource.remove("config/cm.yaml");
  await firstSource.commit("the first RepoSync drops it");
  await eventually(async () => dataOf(await shared(namespace))?.["from"] === "second", {
    timeoutMs: 60_000,
    what: "the second RepoSync to apply its ConfigMap",
  });
  await eventually(
    async () => {
      const status = await repoSyncStatus(namespace, "second");
      return status["lastSyncedCommit"] === secondCommit && syncErrors(status).length === 0;
    },
    { timeoutMs: 60_000, what: "the second RepoSync to sync without errors" },
  );
});

test("one RootSync's declaration dropped from Git: it deletes its object and the other RootSync, which reported KNV1060, applies its own (RootToRoot)", async (t) => {
  const namespace = await testNamespace(t, "handover");
  const [first, second] = [`handover-${suffix()}`, `handover-${suffix()}`];
  const sources: TestRepo[] = [];
  for (const [name, from] of [
    [first, "first"],
    [second, "second"],
  ] as const) {
    deleteRootSyncAfter(t, name);
    const source = await TestRepo.create(t);
    await source.write("config/cm.yaml", configMap(namespace, from));
    await source.write("config/keep.yaml", configMap(namespace, from).replace('"shared"', `"keep-${from}"`));
    sources.push(source);
  }
  const [firstSource, secondSource] = sources as [TestRepo, TestRepo];
  const firstCommit = await firstSource.commit("the first RootSync declares the ConfigMap");
  await createRootSync(first, firstSource);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name: first });
  await rootSynced(first, firstCommit);

  const secondCommit = await secondSource.commit("the second RootSync declares the same ConfigMap");
  await createRootSync(second, secondSource);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name: second });
  await eventually(async () => syncErrors(await rootSyncStatus(second)).some((e) => e["code"] === "1060"), {
    timeoutMs: 60_000,
    what: "the second RootSync to report KNV1060",
  });
  assert.deepEqual(dataOf(await shared(namespace)), { from: "first" });

  await firstSource.remove("config/cm.yaml");
  await rootSynced(first, await firstSource.commit("the first RootSync drops it"));
  await eventually(
    async () => managerOf(await shared(namespace)) === managerAnnotationValue("RootSync", rootSyncNamespace, second),
    { timeoutMs: 60_000, what: "the second RootSync to manage the ConfigMap" },
  );
  assert.deepEqual(dataOf(await shared(namespace)), { from: "second" });
  await eventually(
    async () => {
      const status = await rootSyncStatus(second);
      return status["lastSyncedCommit"] === secondCommit && syncErrors(status).length === 0;
    },
    { timeoutMs: 60_000, what: "the second RootSync to sync without errors" },
  );
});
