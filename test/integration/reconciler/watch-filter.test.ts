/**
 * Watch caches hold this sync's objects only: its watches select its ApplySet label (as Config Sync
 * 1.19 filters them), so another sync's objects of the same type in the same namespace never reach
 * it, and objects that carry its label without being declared (anyone who may write a ConfigMap can
 * forge the label) are left out of the cache. Drift on a declared object is still corrected, also
 * when the label itself is removed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ApplySetLabel, ManagedByValue, ManagedLabel } from "@driftless/api";
import { applySetId } from "@driftless/applier";
import { KubeClient, type KubeObject, type ResourceMapping } from "@driftless/kube";
import {
  createRootSync,
  eventually,
  rootSynced,
  rootSyncNamespace,
  startReconciler,
  suffix,
  testEnv,
  testNamespace,
  TestRepo,
} from "../../support/index.ts";

const configMaps: ResourceMapping = {
  group: "",
  version: "v1",
  kind: "ConfigMap",
  resource: "configmaps",
  namespaced: true,
  verbs: [],
};

const configMap = (namespace: string, name: string, value: string): string =>
  JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data: { value } });

test("a reconciler caches only the objects it declares: not another sync's, not a forged label's", async (t) => {
  const namespace = await testNamespace(t, "watch-filter");
  const client = await KubeClient.fromKubeconfig(testEnv().kubeconfig);
  t.after(() => client.close());
  const [mine, other] = [`filter-a-${suffix()}`, `filter-b-${suffix()}`];

  const repoA = await TestRepo.create(t);
  for (let i = 0; i < 3; i++) await repoA.write(`config/a-${i}.yaml`, configMap(namespace, `a-${i}`, "declared"));
  const commitA = await repoA.commit("three config maps");
  const repoB = await TestRepo.create(t);
  for (let i = 0; i < 20; i++) await repoB.write(`config/b-${i}.yaml`, configMap(namespace, `b-${i}`, "other"));
  const commitB = await repoB.commit("twenty config maps");

  await createRootSync(mine, repoA);
  await createRootSync(other, repoB);
  const reconciler = await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name: mine });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name: other });
  await rootSynced(mine, commitA);
  await rootSynced(other, commitB);

  // The other sync's twenty ConfigMaps (managed-by label and all) share the type and namespace.
  assert.equal(reconciler.watchCache()?.objects, 3, "only this sync's three ConfigMaps are cached");

  // A tenant forges this sync's labels on objects of its own.
  const forged = 50;
  for (let i = 0; i < forged; i++) {
    await client.create(configMaps, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: `forged-${i}`,
        namespace,
        labels: {
          [ApplySetLabel.PartOf]: applySetId({ kind: "RootSync", namespace: rootSyncNamespace, name: mine }),
          [ManagedLabel.ManagedBy]: ManagedByValue,
        },
      },
      data: { value: "x".repeat(1024) },
    });
  }
  await eventually(() => ((reconciler.watchCache()?.undeclared ?? 0) >= forged ? true : undefined), {
    what: "the forged objects to reach the reconciler's watch and be left out",
  });
  assert.equal(reconciler.watchCache()?.objects, 3, "the forged objects are not cached");

  // Drift on a declared object is corrected; so is the removal of the label the watch selects.
  const a0 = (await client.get(configMaps, namespace, "a-0")) as KubeObject;
  await client.replace(configMaps, { ...a0, data: { value: "tampered" } });
  const a1 = (await client.get(configMaps, namespace, "a-1")) as KubeObject;
  const { [ApplySetLabel.PartOf]: _dropped, ...otherLabels } = a1.metadata.labels ?? {};
  await client.replace(configMaps, { ...a1, metadata: { ...a1.metadata, labels: otherLabels } });
  await eventually(
    async () => {
      const [x, y] = await Promise.all([
        client.get(configMaps, namespace, "a-0"),
        client.get(configMaps, namespace, "a-1"),
      ]);
      const restored =
        (x?.["data"] as { value?: string } | undefined)?.value === "declared" &&
        y?.metadata.labels?.[ApplySetLabel.PartOf] !== undefined;
      return restored ? true : undefined;
    },
    { what: "the drifted ConfigMap and the unlabelled one restored" },
  );
});
