/**
 * Custom resources are matched with their CRD's current schema (parity issue, point 2): a CRD declared
 * in the same commit as its resources, a CRD another party changes between passes, and a CRD deleted,
 * whose kind stops being watched at once (scale issue: no retry storm of 404s).
 */
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import { KubeClient, RestMapper, type KubeObject, type ResourceMapping } from "@driftless/kube";
import { createLogger, type Reconciler } from "@driftless/sync";
import {
  gadgetCrd,
  coreApi,
  createRootSync,
  customApi,
  eventually,
  rootSynced,
  rootSyncNamespace,
  startReconciler,
  suffix,
  testEnv,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";

const json = (obj: unknown): string => JSON.stringify(obj);

const gadget = (group: string, namespace: string, value: string): JsonObject => ({
  apiVersion: `${group}/v1`,
  kind: "Gadget",
  metadata: { name: "g", namespace },
  spec: { items: [{ name: "a", value }] },
});

async function otherClient(t: TestContext): Promise<KubeClient> {
  const other = await KubeClient.fromKubeconfig(testEnv().kubeconfig);
  t.after(() => other.close());
  return other;
}

/** Another field manager adds its own item to the keyed list by server-side apply. */
async function addTheirItem(
  other: KubeClient,
  mapping: ResourceMapping,
  group: string,
  namespace: string,
): Promise<void> {
  await other.patch(
    mapping,
    namespace,
    "g",
    {
      apiVersion: `${group}/v1`,
      kind: "Gadget",
      metadata: { name: "g", namespace },
      spec: { items: [{ name: "b", value: "theirs" }] },
    },
    "apply",
    { fieldManager: "someone-else" },
  );
}

async function readItems(group: string, namespace: string): Promise<JsonObject[]> {
  const live = (await customApi().getNamespacedCustomObject({
    group,
    version: "v1",
    namespace,
    plural: "gadgets",
    name: "g",
  })) as JsonObject;
  return ((live["spec"] as JsonObject)["items"] ?? []) as JsonObject[];
}

/** Full passes (resyncPeriodMs 0): each matches the Gadget again; the remediator saw the change before. */
async function passes(reconciler: Reconciler, count: number): Promise<void> {
  const base = reconciler.passCount;
  await eventually(() => reconciler.passCount >= base + count, { what: `${count} more passes` });
}

test("a CRD and its custom resource in one commit: another manager's keyed-list item costs no write", async (t) => {
  const id = suffix();
  const group = `same${id}.example.com`;
  const namespace = `same-commit-${id}`;
  const name = `same-commit-${id}`;
  const repo = await TestRepo.create(t);
  await repo.write("config/crd.yaml", json(gadgetCrd(group, "map")));
  await repo.write("config/ns.yaml", json({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }));
  await repo.write("config/gadget.yaml", json(gadget(group, namespace, "1")));
  const first = await repo.commit("a CRD with a keyed list, and a resource of it");
  await createRootSync(name, repo);
  t.after(async () => {
    await coreApi()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined);
  });
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { resyncPeriodMs: 0 },
  );

  // As another controller would, as soon as the Gadget exists: before any later pass reads a schema again.
  const other = await otherClient(t);
  const mapping = await eventually(() => new RestMapper(other).mappingFor(`${group}/v1`, "Gadget"), {
    what: "the Gadget kind to be served",
  });
  await eventually(async () => (await other.get(mapping, namespace, "g")) !== undefined, {
    what: "driftless to create the Gadget",
  });
  await addTheirItem(other, mapping, group, namespace);
  const theirs = await other.get(mapping, namespace, "g");
  await rootSynced(name, first);
  await passes(reconciler, 3);
  const after = await other.get(mapping, namespace, "g");
  assert.equal(
    after?.metadata.resourceVersion,
    theirs?.metadata.resourceVersion,
    "driftless wrote the Gadget after another manager's item",
  );
  assert.deepEqual(await readItems(group, namespace), [
    { name: "a", value: "1" },
    { name: "b", value: "theirs" },
  ]);
});

test("a CRD another party changes from an atomic to a keyed list is matched with its new schema", async (t) => {
  const id = suffix();
  const group = `changed${id}.example.com`;
  const namespace = `crd-changed-${id}`;
  const name = `crd-changed-${id}`;
  const crdMapping: ResourceMapping = {
    group: "apiextensions.k8s.io",
    version: "v1",
    kind: "CustomResourceDefinition",
    resource: "customresourcedefinitions",
    namespaced: false,
    verbs: ["get", "create", "update", "delete"],
  };
  // The CRD is someone else's (not in Git): only the custom resource is driftless's.
  const other = await otherClient(t);
  await other.create(crdMapping, gadgetCrd(group, "atomic") as KubeObject);
  t.after(async () => {
    await other.delete(crdMapping, undefined, `gadgets.${group}`).catch(() => undefined);
    await coreApi()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined);
  });
  const mapping = await eventually(() => new RestMapper(other).mappingFor(`${group}/v1`, "Gadget"), {
    what: "the Gadget kind to be served",
  });
  const repo = await TestRepo.create(t);
  await repo.write("config/ns.yaml", json({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }));
  await repo.write("config/gadget.yaml", json(gadget(group, namespace, "1")));
  const first = await repo.commit("a resource of someone else's CRD");
  await createRootSync(name, repo);
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { resyncPeriodMs: 0 },
  );
  await rootSynced(name, first);
  await passes(reconciler, 1); // the Gadget has been matched with the atomic schema

  const crd = await other.get(crdMapping, undefined, `gadgets.${group}`);
  assert.ok(crd);
  await other.replace(crdMapping, { ...crd, spec: gadgetCrd(group, "map")["spec"] } as KubeObject);
  // Their apply merges by key only once the API server itself uses the new schema.
  await eventually(
    async () => {
      await addTheirItem(other, mapping, group, namespace);
      return (await readItems(group, namespace)).length === 2;
    },
    { what: "the API server to merge the list by key" },
  );
  const writesBefore = reconciler.client.requests.writes();
  await passes(reconciler, 3);
  assert.equal(reconciler.client.requests.writes() - writesBefore, 0, "driftless wrote after another manager's item");
  assert.deepEqual(await readItems(group, namespace), [
    { name: "a", value: "1" },
    { name: "b", value: "theirs" },
  ]);

  await repo.write("config/gadget.yaml", json(gadget(group, namespace, "2")));
  const second = await repo.commit("a changes");
  await rootSynced(name, second);
  assert.deepEqual(await readItems(group, namespace), [
    { name: "a", value: "2" },
    { name: "b", value: "theirs" },
  ]);
});

test("a CRD pruned from Git stops its kind's watch at once, without 404 warnings", async (t) => {
  const id = suffix();
  const group = `pruned${id}.example.com`;
  const namespace = `crd-pruned-${id}`;
  const name = `crd-pruned-${id}`;
  const repo = await TestRepo.create(t);
  await repo.write("config/crd.yaml", json(gadgetCrd(group, "map")));
  await repo.write("config/ns.yaml", json({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }));
  await repo.write("config/gadget.yaml", json(gadget(group, namespace, "1")));
  const first = await repo.commit("a CRD and a resource of it");
  await createRootSync(name, repo);
  t.after(async () => {
    await coreApi()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined);
  });
  const lines: string[] = [];
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    {
      resyncPeriodMs: 0,
      log: createLogger({ test: t.name }, { level: "debug", write: (line) => void lines.push(line) }),
    },
  );
  await rootSynced(name, first);

  await repo.remove("config/crd.yaml");
  await repo.remove("config/gadget.yaml");
  const second = await repo.commit("the CRD and its resource go");
  await rootSynced(name, second);
  await eventually(
    async () => {
      try {
        await customApi().getClusterCustomObject({
          group: "apiextensions.k8s.io",
          version: "v1",
          plural: "customresourcedefinitions",
          name: `gadgets.${group}`,
        });
        return false;
      } catch {
        return true;
      }
    },
    { what: "the CRD to be deleted" },
  );
  // Each backoff step of a retried watch would log one warning: 200 ms, 400 ms, 800 ms, 1.6 s, ...
  await passes(reconciler, 10);
  const warnings = lines.filter((line) => line.includes("list or watch failed") && line.includes(group));
  assert.deepEqual(warnings, [], "the deleted kind was still watched");
});
