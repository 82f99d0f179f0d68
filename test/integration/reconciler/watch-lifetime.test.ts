/**
 * How long a reconciler's watches live. A type leaves the watches once the pass after it left Git has pruned
 * it (the CRD watch with the last custom resource type), and is watched, and its drift corrected, again
 * once declared again: per reconciler, one watch per managed type and none for types it does not manage.
 * After a restart, before any pass declares, the caches keep only what the stored inventory records: objects
 * forging the sync's label, made while no reconciler ran, are counted, never cached.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ApplySetLabel, ManagedByValue, ManagedLabel } from "@driftless/api";
import { applySetId } from "@driftless/applier";
import { KubeClient, type ResourceMapping } from "@driftless/kube";
import type { Reconciler } from "@driftless/sync";
import {
  coreApi,
  createRootSync,
  customApi,
  eventually,
  rootSynced,
  rootSyncNamespace,
  startReconciler,
  suffix,
  testEnv,
  testNamespace,
  TestRepo,
  updateRootSyncSpec,
  type JsonObject,
} from "../../support/index.ts";
import { widgetCrd } from "../../support/crds.ts";

/** The reconciler's watch caches and CRD watch, as the composition root holds them. */
interface Watches {
  readonly live: { watchedTypes(): ResourceMapping[] };
  readonly crdWatch: { readonly watching: boolean } | undefined;
}

function watchesOf(reconciler: Reconciler): Watches {
  return (reconciler as unknown as { parts: Watches }).parts;
}

const watchedResources = (reconciler: Reconciler): string[] =>
  watchesOf(reconciler)
    .live.watchedTypes()
    .map((m) => m.resource)
    .sort();

const configMaps: ResourceMapping = {
  group: "",
  version: "v1",
  kind: "ConfigMap",
  resource: "configmaps",
  namespaced: true,
  verbs: [],
};

test("a type that leaves Git stops being watched after the pass that prunes it, the CRD watch with the last custom resource type; declared again, it is watched and its drift corrected", async (t) => {
  const id = suffix();
  const name = `watch-lifetime-${id}`;
  const namespace = name;
  const group = `lifetime${id}.example.com`;
  const repo = await TestRepo.create(t);
  t.after(async () => {
    await coreApi()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined);
  });
  const write = (path: string, object: JsonObject): Promise<void> =>
    repo.write(`config/${path}`, JSON.stringify(object));
  const serviceAccount = {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name: "sa", namespace, labels: { team: "a" } },
  };
  const widget = {
    apiVersion: `${group}/v1`,
    kind: "Widget",
    metadata: { name: "w", namespace },
    spec: { size: 1 },
  };
  await write("ns.yaml", { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
  await write("cm.yaml", {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "cm", namespace },
    data: { a: "1" },
  });
  await write("crd.yaml", widgetCrd(group));
  await write("sa.yaml", serviceAccount);
  await write("widget.yaml", widget);
  const all = await repo.commit("a ServiceAccount and a Widget among built-in kinds");
  await createRootSync(name, repo);
  const reconciler = await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, all);
  const { crdWatch } = watchesOf(reconciler);
  assert.ok(watchedResources(reconciler).includes("serviceaccounts"));
  assert.ok(watchedResources(reconciler).includes("widgets"));
  assert.equal(crdWatch?.watching, true, "a sync managing a custom resource watches CRDs");

  // The CRD stays in Git, its only custom resource and the ServiceAccount go.
  await repo.remove("config/sa.yaml");
  await repo.remove("config/widget.yaml");
  const fewer = await repo.commit("the ServiceAccount and the Widget leave");
  await rootSynced(name, fewer);
  await eventually(
    async () => {
      const widgets = (await customApi().listNamespacedCustomObject({
        group,
        version: "v1",
        namespace,
        plural: "widgets",
      })) as { items: unknown[] };
      return widgets.items.length === 0 ? true : undefined;
    },
    { what: "the Widget pruned" },
  );
  assert.deepEqual(
    watchedResources(reconciler),
    ["configmaps", "customresourcedefinitions", "namespaces"],
    "the pass that pruned them stopped the watches of the types no longer managed",
  );
  assert.equal(crdWatch?.watching, false, "the CRD watch outlived the last custom resource type");

  await write("sa.yaml", serviceAccount);
  await write("widget.yaml", widget);
  const again = await repo.commit("the ServiceAccount and the Widget are back");
  await rootSynced(name, again);
  assert.ok(watchedResources(reconciler).includes("serviceaccounts"));
  assert.ok(watchedResources(reconciler).includes("widgets"));
  assert.equal(crdWatch?.watching, true, "a custom resource type declared again opens the CRD watch again");

  // Drift on either is seen by the new watches and corrected (a poll of an unchanged commit applies nothing).
  await coreApi().patchNamespacedServiceAccount({
    name: "sa",
    namespace,
    body: [{ op: "replace", path: "/metadata/labels/team", value: "b" }],
  });
  await customApi().deleteNamespacedCustomObject({ group, version: "v1", namespace, plural: "widgets", name: "w" });
  await eventually(
    async () => {
      const sa = await coreApi().readNamespacedServiceAccount({ name: "sa", namespace });
      return sa.metadata?.labels?.["team"] === "a" ? true : undefined;
    },
    { what: "the ServiceAccount's label corrected" },
  );
  await eventually(
    async () => {
      const w = (await customApi()
        .getNamespacedCustomObject({ group, version: "v1", namespace, plural: "widgets", name: "w" })
        .catch(() => undefined)) as JsonObject | undefined;
      return w === undefined ? undefined : true;
    },
    { what: "the deleted Widget re-created" },
  );
});

test("after a restart, objects forging the root sync's label made while no reconciler ran are counted, not cached, before any pass declares", async (t) => {
  const [declaredIn, tenant] = [await testNamespace(t, "restart-bound"), await testNamespace(t, "restart-tenant")];
  const client = await KubeClient.fromKubeconfig(testEnv().kubeconfig);
  t.after(() => client.close());
  const name = `restart-bound-${suffix()}`;
  const repo = await TestRepo.create(t);
  for (let i = 0; i < 2; i++)
    await repo.write(
      `config/a-${i}.yaml`,
      JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: `a-${i}`, namespace: declaredIn } }),
    );
  const commit = await repo.commit("two config maps");
  await createRootSync(name, repo);
  const identity = { kind: "RootSync", namespace: rootSyncNamespace, name } as const;
  const first = await startReconciler(t, identity);
  await rootSynced(name, commit);
  await first.stop(5_000);

  // While no reconciler runs: a tenant forges the label, and the source breaks, so no pass gets to declare.
  const forged = 40;
  const label = applySetId(identity);
  for (let at = 0; at < forged; at += 20)
    await Promise.all(
      Array.from({ length: Math.min(20, forged - at) }, (_, i) =>
        client.create(configMaps, {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: {
            name: `forged-${at + i}`,
            namespace: tenant,
            labels: { [ApplySetLabel.PartOf]: label, [ManagedLabel.ManagedBy]: ManagedByValue },
          },
          data: { value: "x".repeat(4096) },
        }),
      ),
    );
  const branch = repo.branch;
  await updateRootSyncSpec(name, (spec) => ({ ...spec, git: { ...(spec["git"] as JsonObject), branch: "none" } }));

  const second = await startReconciler(t, identity, { pollPeriodMs: 3_600_000 });
  // The restore lists the stored inventory's types: every labelled ConfigMap is either cached or counted.
  const seen = await eventually(
    () => {
      const cache = second.watchCache();
      return cache !== undefined && cache.objects + cache.undeclared >= forged + 2 ? cache : undefined;
    },
    { what: "the restore's list of ConfigMaps" },
  );
  assert.deepEqual(
    seen,
    { objects: 2, undeclared: forged },
    "only the inventory's two ConfigMaps are cached before a pass declares",
  );
  const gauge = async (): Promise<number | undefined> => {
    const metric = await second.metrics.registry.getSingleMetric("driftless_watch_undeclared_objects")?.get();
    return metric?.values.find((v) => v.labels["type"] === "ConfigMap")?.value;
  };
  const passes = second.passCount;
  await second.trigger("poll");
  await eventually(() => (second.passCount > passes ? true : undefined), { what: "a failing pass" });
  assert.equal(await gauge(), forged, "the forged ConfigMaps are reported after a pass that could not declare");

  await updateRootSyncSpec(name, (spec) => ({ ...spec, git: { ...(spec["git"] as JsonObject), branch } }));
  await second.trigger("poll");
  await rootSynced(name, commit);
  assert.deepEqual(second.watchCache(), { objects: 2, undeclared: forged });
  assert.equal(await gauge(), forged);
});
