/**
 * A kind the cluster does not serve holds back only its own objects, as in Config Sync: the rest of the commit
 * is applied and pruned, KNV1021 is on status.source, and the objects follow once the CRD is served.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { ResourceMapping } from "@driftless/kube";
import {
  coreApi,
  createRootSync,
  eventually,
  rootSynced,
  rootSyncNamespace,
  rootSyncStatus,
  startReconciler,
  statusCode,
  suffix,
  testNamespace,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";
import { adminClient, crds } from "../kube/support.ts";

const json = (obj: unknown): string => JSON.stringify(obj);

async function configMapExists(namespace: string, name: string): Promise<boolean> {
  try {
    await coreApi().readNamespacedConfigMap({ namespace, name });
    return true;
  } catch (error) {
    if (statusCode(error) === 404) return false;
    throw error;
  }
}

test("an unserved kind sets aside its objects only: the rest applies and prunes, KNV1021 is reported, and they follow the CRD", async (t) => {
  const client = await adminClient(t);
  const namespace = await testNamespace(t, "unknown");
  const group = `unk-${suffix()}.example.com`;
  const widgets: ResourceMapping = {
    group,
    version: "v1",
    kind: "Widget",
    resource: "widgets",
    namespaced: true,
    verbs: [],
  };
  const configMap = (name: string): string =>
    json({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data: { k: name } });
  const repo = await TestRepo.create(t);
  await repo.write("config/old.yaml", configMap("old"));
  const first = await repo.commit("a config map");
  const name = `unknown-${suffix()}`;
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, first);

  // A Widget of a group nobody serves yet, a new ConfigMap, and the old one removed.
  await repo.remove("config/old.yaml");
  await repo.write("config/new.yaml", configMap("new"));
  await repo.write(
    "config/widget.yaml",
    json({ apiVersion: `${group}/v1`, kind: "Widget", metadata: { name: "w", namespace }, spec: { size: 1 } }),
  );
  const second = await repo.commit("a widget before its CRD");
  const errors = await eventually(
    async () => {
      const source = ((await rootSyncStatus(name))["source"] ?? {}) as JsonObject;
      const found = (source["errors"] ?? []) as JsonObject[];
      return source["commit"] === second && found.length > 0 ? found : undefined;
    },
    { timeoutMs: 60_000, what: "KNV1021 on status.source at the second commit" },
  );
  assert.deepEqual(
    errors.map((e) => e["code"]),
    ["1021"],
  );
  await eventually(() => configMapExists(namespace, "new"), { timeoutMs: 30_000, what: "the new ConfigMap applied" });
  await eventually(async () => !(await configMapExists(namespace, "old")), {
    timeoutMs: 30_000,
    what: "the removed ConfigMap pruned while the Widget is set aside",
  });
  assert.notEqual((await rootSyncStatus(name))["lastSyncedCommit"], second, "synced with an object left out");

  // The CRD comes (from elsewhere): the Widget is applied, and the commit syncs.
  const crdName = `widgets.${group}`;
  t.after(() => client.delete(crds, undefined, crdName).catch(() => undefined));
  await client.create(crds, {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: crdName },
    spec: {
      group,
      names: { kind: "Widget", plural: "widgets", singular: "widget", listKind: "WidgetList" },
      scope: "Namespaced",
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        },
      ],
    },
  });
  await rootSynced(name, second);
  assert.ok(await client.get(widgets, namespace, "w"), "the Widget was not applied once its CRD was served");
});
