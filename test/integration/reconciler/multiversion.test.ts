/**
 * Config Sync's TestMultipleVersions_CustomResourceV1: a CRD serving two versions, one object declared
 * at each, created and then changed by the next commit.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  createRootSync,
  customApi,
  type JsonObject,
  rootSynced,
  rootSyncNamespace,
  rootSyncStatus,
  startReconciler,
  suffix,
  testNamespace,
  TestRepo,
} from "../../support/index.ts";

function anvilCrd(group: string): JsonObject {
  const schema = {
    openAPIV3Schema: {
      type: "object",
      properties: {
        spec: {
          type: "object",
          required: ["lbs"],
          properties: { lbs: { type: "integer", minimum: 1, maximum: 9000 } },
        },
      },
    },
  };
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `anvils.${group}` },
    spec: {
      group,
      names: { kind: "Anvil", plural: "anvils", singular: "anvil" },
      scope: "Namespaced",
      versions: [
        { name: "v1", served: true, storage: false, schema },
        { name: "v2", served: true, storage: true, schema },
      ],
    },
  };
}

const anvil = (group: string, version: string, namespace: string, name: string, lbs: number): string =>
  JSON.stringify({ apiVersion: `${group}/${version}`, kind: "Anvil", metadata: { name, namespace }, spec: { lbs } });

test("objects declared at two served versions of one CRD are created and then updated by the next commit", async (t) => {
  const namespace = await testNamespace(t, "mv");
  const group = `mv${suffix()}.acme.com`;
  const name = `mv-${suffix()}`;
  t.after(async () => {
    await customApi()
      .deleteNamespacedCustomObject({
        group: "configsync.gke.io",
        version: "v1beta1",
        namespace: rootSyncNamespace,
        plural: "rootsyncs",
        name,
      })
      .catch(() => undefined);
  });
  const repo = await TestRepo.create(t);
  await repo.write("config/crd.yaml", JSON.stringify(anvilCrd(group)));
  await repo.commit("the CRD");
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });

  await repo.write("config/anvilv1.yaml", anvil(group, "v1", namespace, "first", 10));
  await repo.write("config/anvilv2.yaml", anvil(group, "v2", namespace, "second", 100));
  const created = await repo.commit("v1 and v2 Anvils");
  await rootSynced(name, created);

  await repo.write("config/anvilv1.yaml", anvil(group, "v1", namespace, "first", 20));
  await repo.write("config/anvilv2.yaml", anvil(group, "v2", namespace, "second", 200));
  const changed = await repo.commit("both Anvils changed");
  const status = await rootSynced(name, changed);
  assert.deepEqual(((status["sync"] as JsonObject | undefined)?.["errors"] ?? []) as unknown[], []);

  const read = async (version: string, object: string): Promise<JsonObject> =>
    (await customApi().getNamespacedCustomObject({
      group,
      version,
      namespace,
      plural: "anvils",
      name: object,
    })) as JsonObject;
  assert.deepEqual((await read("v1", "first"))["spec"], { lbs: 20 });
  assert.deepEqual((await read("v2", "second"))["spec"], { lbs: 200 });
  const labels = async (version: string, object: string): Promise<Record<string, string>> =>
    ((await read(version, object))["metadata"] as { labels?: Record<string, string> }).labels ?? {};
  assert.equal((await labels("v2", "first"))["configsync.gke.io/declared-version"], "v1");
  assert.equal((await labels("v2", "second"))["configsync.gke.io/declared-version"], "v2");
  assert.deepEqual(((await rootSyncStatus(name))["sync"] as JsonObject)["errors"] ?? [], []);
});
