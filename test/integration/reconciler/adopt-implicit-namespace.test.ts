/**
 * Config Sync's e2e TestAdoptImplicitNamespace replayed on the real control plane: a Namespace one
 * RootSync created implicitly is taken by another RootSync that declares it in Git (with the detach
 * annotation), the first stops declaring it without pruning or fighting, and still syncs objects in it.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { ManagedAnnotation, UserAnnotation, inventoryId, managerAnnotationValue } from "@driftless/api";
import type { Reconciler } from "@driftless/sync";
import {
  coreApi,
  createRootSync,
  customApi,
  eventually,
  type JsonObject,
  rootSynced,
  rootSyncNamespace,
  rootSyncs,
  rootSyncStatus,
  startReconciler,
  suffix,
  TestRepo,
} from "../../support/index.ts";

const json = (value: unknown): string => JSON.stringify(value);

function deleteAfter(t: TestContext, rootSync: string): void {
  t.after(() =>
    customApi()
      .deleteNamespacedCustomObject({ ...rootSyncs, name: rootSync })
      .catch(() => undefined),
  );
}

async function namespaceMetadata(name: string): Promise<{ annotations: Record<string, string>; version: string }> {
  const metadata = (await coreApi().readNamespace({ name })).metadata;
  return { annotations: metadata?.annotations ?? {}, version: metadata?.resourceVersion ?? "" };
}

/** Whether the RootSync's inventory (its ResourceGroup) lists the Namespace. */
async function inventoryHolds(rootSync: string, namespace: string): Promise<boolean> {
  const group = (await customApi().getNamespacedCustomObject({
    group: "kpt.dev",
    version: "v1alpha1",
    namespace: rootSyncNamespace,
    plural: "resourcegroups",
    name: rootSync,
  })) as JsonObject;
  const resources = ((group["spec"] as JsonObject | undefined)?.["resources"] ?? []) as JsonObject[];
  return resources.some((r) => r["kind"] === "Namespace" && r["name"] === namespace);
}

const syncErrors = async (rootSync: string): Promise<JsonObject[]> =>
  (((await rootSyncStatus(rootSync))["sync"] as JsonObject | undefined)?.["errors"] ?? []) as JsonObject[];

/** Resolves once `reconciler` has run `count` more passes, asking for the first. */
async function morePasses(reconciler: Reconciler, count: number): Promise<void> {
  const start = reconciler.passCount;
  await reconciler.trigger("drift", "test: more passes");
  await eventually(() => reconciler.passCount >= start + count, {
    timeoutMs: 60_000,
    what: `${count} more passes`,
  });
}

/**
 * RootSync `holder` synced with a ConfigMap in Namespace `shipping`, which it so creates implicitly; both the
 * holder and the RootSync `taker` are deleted after the test.
 */
async function implicitHolder(
  t: TestContext,
  holder: string,
  taker: string,
  shipping: string,
): Promise<{ repo: TestRepo; reconciler: Reconciler }> {
  deleteAfter(t, holder);
  deleteAfter(t, taker);
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: shipping })
      .catch(() => undefined),
  );
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/cm.yaml",
    json({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "shipping-cm", namespace: shipping } }),
  );
  const withCm = await repo.commit("declare a ConfigMap, creating an implicit namespace");
  await createRootSync(holder, repo);
  const reconciler = await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name: holder });
  await rootSynced(holder, withCm);
  return { repo, reconciler };
}

test("a RootSync declaring a Namespace another RootSync created implicitly adopts it; the first lets it go and keeps syncing in it", async (t) => {
  const id = suffix();
  const rootA = `implicit-holder-${id}`;
  const syncB = `implicit-adopter-${id}`;
  const shipping = `shipping-${id}`;
  // A namespaced object in an undeclared Namespace: rootA creates the Namespace implicitly.
  const { repo: repoA, reconciler: reconcilerA } = await implicitHolder(t, rootA, syncB, shipping);
  const implicit = (await namespaceMetadata(shipping)).annotations;
  assert.equal(implicit[UserAnnotation.LifecycleDeletion], "detach");
  assert.equal(implicit[ManagedAnnotation.Manager], managerAnnotationValue("RootSync", rootSyncNamespace, rootA));
  assert.equal(implicit[ManagedAnnotation.SourcePath], undefined);

  // syncB declares it explicitly, with the detach annotation: it syncs (no KNV1060) and holds the Namespace.
  const repoB = await TestRepo.create(t);
  await repoB.write(
    "config/ns.yaml",
    json({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: shipping, annotations: { [UserAnnotation.LifecycleDeletion]: "detach" } },
    }),
  );
  const declared = await repoB.commit("declare the Namespace with the detach annotation");
  await createRootSync(syncB, repoB);
  const reconcilerB = await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name: syncB });
  await rootSynced(syncB, declared);
  const adopted = (await namespaceMetadata(shipping)).annotations;
  assert.equal(adopted[UserAnnotation.LifecycleDeletion], "detach");
  assert.equal(adopted[ManagedAnnotation.Manager], managerAnnotationValue("RootSync", rootSyncNamespace, syncB));
  assert.equal(adopted[ManagedAnnotation.OwningInventory], inventoryId(rootSyncNamespace, syncB));
  assert.equal(adopted[ManagedAnnotation.SourcePath], "config/ns.yaml");

  // rootA lets go: its inventory drops the Namespace (abandoned, not pruned) without reporting a conflict.
  await eventually(async () => !(await inventoryHolds(rootA, shipping)), {
    timeoutMs: 60_000,
    what: `${rootA}'s inventory to let go of the Namespace`,
  });
  assert.deepEqual(await syncErrors(rootA), []);

  // Neither writes the Namespace again over a few passes of each.
  const settled = await namespaceMetadata(shipping);
  await Promise.all([morePasses(reconcilerA, 3), morePasses(reconcilerB, 3)]);
  const after = await namespaceMetadata(shipping);
  assert.equal(after.version, settled.version, `the Namespace was written again: ${json(after.annotations)}`);
  assert.deepEqual(await syncErrors(rootA), []);
  assert.deepEqual(await syncErrors(syncB), []);

  // rootA keeps syncing objects in the Namespace, which stays syncB's.
  await repoA.write(
    "config/sa.yaml",
    json({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "shipping-sa", namespace: shipping } }),
  );
  const withSa = await repoA.commit("declare a ServiceAccount");
  await rootSynced(rootA, withSa);
  await coreApi().readNamespacedServiceAccount({ namespace: shipping, name: "shipping-sa" });
  const still = await namespaceMetadata(shipping);
  assert.equal(still.annotations[UserAnnotation.LifecycleDeletion], "detach");
  assert.equal(
    still.annotations[ManagedAnnotation.Manager],
    managerAnnotationValue("RootSync", rootSyncNamespace, syncB),
  );
  assert.equal(still.version, settled.version, "rootA's new commit wrote the Namespace");
});

test("a RootSync declaring another RootSync's implicit Namespace without detach takes it; the holder reports KNV1060 naming it, keeps it, and lets go once the declaration carries detach", async (t) => {
  const id = suffix();
  const rootA = `implicit-keeper-${id}`;
  const syncB = `implicit-taker-${id}`;
  const shipping = `shipping-${id}`;
  await implicitHolder(t, rootA, syncB, shipping);

  // Config Sync's e2e: "the RootSyncs fight over ownership because this removes the preventDeletion annotation".
  const namespace = (annotations: Record<string, string>) =>
    json({ apiVersion: "v1", kind: "Namespace", metadata: { name: shipping, annotations } });
  const repoB = await TestRepo.create(t);
  await repoB.write("config/ns.yaml", namespace({}));
  const plain = await repoB.commit("declare the Namespace without the detach annotation");
  await createRootSync(syncB, repoB);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name: syncB });
  await rootSynced(syncB, plain);
  const holderA = managerAnnotationValue("RootSync", rootSyncNamespace, rootA);
  const holderB = managerAnnotationValue("RootSync", rootSyncNamespace, syncB);
  const conflict = await eventually(async () => (await syncErrors(rootA)).find((e) => e["code"] === "1060"), {
    timeoutMs: 60_000,
    what: `${rootA} to report the management conflict`,
  });
  assert.ok(
    String(conflict["errorMessage"]).includes(
      `The "${holderA}" reconciler detected a management conflict with the "${holderB}" reconciler. Remove the object from one of the sources of truth so that the object is only managed by one reconciler.`,
    ),
    String(conflict["errorMessage"]),
  );
  assert.deepEqual(conflict["errorResources"], [
    { gvk: { group: "", kind: "Namespace", version: "v1" }, name: shipping, sourcePath: "config/ns.yaml" },
  ]);
  // Reported, never deleted: the Namespace is syncB's, with rootA's ConfigMap still in it.
  const taken = await coreApi().readNamespace({ name: shipping });
  assert.equal(taken.metadata?.deletionTimestamp, undefined);
  assert.equal(taken.metadata?.annotations?.[ManagedAnnotation.Manager], holderB);
  await coreApi().readNamespacedConfigMap({ namespace: shipping, name: "shipping-cm" });
  assert.deepEqual(await syncErrors(syncB), []);

  // With detach the adoption is the one Config Sync expects: rootA lets go and reports nothing.
  await repoB.write("config/ns.yaml", namespace({ [UserAnnotation.LifecycleDeletion]: "detach" }));
  await rootSynced(syncB, await repoB.commit("set detach on the explicit Namespace"));
  await eventually(async () => (await syncErrors(rootA)).length === 0 && !(await inventoryHolds(rootA, shipping)), {
    timeoutMs: 60_000,
    what: `${rootA} to clear the conflict and let go of the Namespace`,
  });
  const adopted = (await namespaceMetadata(shipping)).annotations;
  assert.equal(adopted[ManagedAnnotation.Manager], holderB);
  assert.equal(adopted[UserAnnotation.LifecycleDeletion], "detach");
});
