/**
 * RepoSyncs `repo-sync` and `root-sync` of one namespace write the same manager annotation (the bare
 * namespace), as Config Sync's do. The owning inventory keeps them apart, as Config Sync's inventory
 * policy does: the first holder keeps a shared object and the other reports KNV1060, with no fight.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ManagedAnnotation, inventoryId, managerAnnotationValue } from "@driftless/api";
import {
  coreApi,
  createRepoSync,
  customApi,
  eventually,
  type JsonObject,
  repoSyncStatus,
  startReconciler,
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

async function sharedConfigMap(namespace: string): Promise<JsonObject> {
  return (await coreApi().readNamespacedConfigMap({ namespace, name: "shared" })) as unknown as JsonObject;
}

const metadataOf = (object: JsonObject): JsonObject => object["metadata"] as JsonObject;
const annotationsOf = (object: JsonObject): Record<string, string> =>
  (metadataOf(object)["annotations"] ?? {}) as Record<string, string>;

/** A RepoSync named `root-sync`, which the shared helper (always `repo-sync`) cannot make. */
async function createRepoSyncNamed(namespace: string, name: string, repo: TestRepo): Promise<void> {
  await customApi().createNamespacedCustomObject({
    group: "configsync.gke.io",
    version: "v1beta1",
    namespace,
    plural: "reposyncs",
    body: {
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RepoSync",
      metadata: { name, namespace },
      spec: {
        sourceFormat: "unstructured",
        git: { repo: repo.url, branch: repo.branch, dir: "config", auth: "none" },
      },
    },
  });
}

test("RepoSyncs repo-sync and root-sync declaring one ConfigMap: the holder keeps it, the other reports KNV1060 and writes nothing", async (t) => {
  const namespace = await testNamespace(t, "collide");
  const holderSource = await TestRepo.create(t);
  await holderSource.write("config/cm.yaml", configMap(namespace, "repo-sync"));
  const holderCommit = await holderSource.commit("repo-sync declares the ConfigMap");
  await createRepoSync(namespace, holderSource);
  const holder = await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" });
  await eventually(async () => (await repoSyncStatus(namespace))["lastSyncedCommit"] === holderCommit, {
    what: "repo-sync to sync",
  });
  const held = await sharedConfigMap(namespace);
  assert.equal(annotationsOf(held)[ManagedAnnotation.OwningInventory], inventoryId(namespace, "repo-sync"));
  // The collision itself: both RepoSyncs write this same value.
  assert.equal(
    annotationsOf(held)[ManagedAnnotation.Manager],
    managerAnnotationValue("RepoSync", namespace, "root-sync"),
  );

  const otherSource = await TestRepo.create(t);
  await otherSource.write("config/cm.yaml", configMap(namespace, "root-sync"));
  await otherSource.commit("root-sync declares the same ConfigMap with other data");
  await createRepoSyncNamed(namespace, "root-sync", otherSource);
  const other = await startReconciler(t, { kind: "RepoSync", namespace, name: "root-sync" });
  await eventually(() => other.passCount >= 1, { timeoutMs: 60_000, what: "root-sync's first pass" });

  // Its first pass took nothing: the object is as repo-sync wrote it...
  const afterFirst = await sharedConfigMap(namespace);
  assert.deepEqual(afterFirst["data"], { from: "repo-sync" }, "root-sync overwrote repo-sync's ConfigMap");
  assert.equal(metadataOf(afterFirst)["resourceVersion"], metadataOf(held)["resourceVersion"], "root-sync wrote it");
  // ...and it says why, naming repo-sync apart from itself.
  const errors = await eventually(
    async () => {
      const found = syncErrors(await repoSyncStatus(namespace, "root-sync")).filter((e) => e["code"] === "1060");
      return found.length > 0 ? found : undefined;
    },
    { what: "root-sync to report KNV1060" },
  );
  assert.ok(
    String(errors[0]?.["errorMessage"]).includes(
      `The "${namespace}" reconciler detected a management conflict with the "${namespace}_repo-sync" reconciler.`,
    ),
    String(errors[0]?.["errorMessage"]),
  );

  // No fight: over several more passes of both (their remediators watching the object), it is not written.
  const holderPasses = holder.passCount;
  const otherPasses = other.passCount;
  await holder.trigger("drift", "test: one more pass");
  await other.trigger("drift", "test: one more pass");
  await eventually(() => holder.passCount >= holderPasses + 3 && other.passCount >= otherPasses + 3, {
    timeoutMs: 60_000,
    what: "three more passes of each RepoSync",
  });
  const settled = await sharedConfigMap(namespace);
  assert.equal(
    metadataOf(settled)["resourceVersion"],
    metadataOf(held)["resourceVersion"],
    "the ConfigMap was written",
  );
  assert.deepEqual(settled["data"], { from: "repo-sync" });
  assert.ok(
    syncErrors(await repoSyncStatus(namespace, "root-sync")).some((e) => e["code"] === "1060"),
    "root-sync stopped reporting the conflict",
  );
  assert.equal(syncErrors(await repoSyncStatus(namespace)).length, 0, "repo-sync reports an error");
});
