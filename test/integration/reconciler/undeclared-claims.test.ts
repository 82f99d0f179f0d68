/**
 * The remediator and what claims this sync. An object made by hand that says this sync manages it
 * (Config Sync's TestDriftKubectlApplyNamespaceScoped / ClusterScoped) but that Git does not declare is
 * deleted at once; one copying another object's resource-id, naming another manager or owned by another
 * object is left alone; a Namespace still holding objects is not deleted until it is empty. A hand-applied
 * `managed: disabled` on an object Git declares enabled is overwritten with the drift, without a new commit.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { managerAnnotationValue, resourceId } from "@driftless/api";
import { applySetId } from "@driftless/applier";
import {
  coreApi,
  createRootSync,
  customApi,
  eventually,
  rootSynced,
  rootSyncNamespace,
  rootSyncs,
  startReconciler,
  statusCode,
  suffix,
  testNamespace,
  TestRepo,
} from "../../support/index.ts";

const configMap = (namespace: string, name: string, data: Record<string, string>): string =>
  JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data });

async function readConfigMap(namespace: string, name: string) {
  try {
    return await coreApi().readNamespacedConfigMap({ namespace, name });
  } catch (error) {
    if (statusCode(error) === 404) return undefined;
    throw error;
  }
}

async function namespaceExists(name: string): Promise<boolean> {
  try {
    const namespace = await coreApi().readNamespace({ name });
    return namespace.metadata?.deletionTimestamp === undefined;
  } catch (error) {
    if (statusCode(error) === 404) return false;
    throw error;
  }
}

/** A RootSync of its own, synced to a first commit, with its reconciler running. */
async function syncedRootSync(t: TestContext, files: Record<string, string>) {
  const name = `claims-${suffix()}`;
  t.after(() =>
    customApi()
      .deleteNamespacedCustomObject({ ...rootSyncs, name })
      .catch(() => undefined),
  );
  const repo = await TestRepo.create(t);
  for (const [path, text] of Object.entries(files)) await repo.write(path, text);
  const first = await repo.commit("first");
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, first);
  const sync = { kind: "RootSync", namespace: rootSyncNamespace, name } as const;
  /** The metadata Config Sync's e2e tests apply by hand: this sync's manager, the object's resource-id, its ApplySet label. */
  const claim = (id: { group: string; kind: string; namespace?: string; name: string }) => ({
    annotations: {
      "configmanagement.gke.io/managed": "enabled",
      "configsync.gke.io/resource-id": resourceId(id),
      "configsync.gke.io/manager": managerAnnotationValue("RootSync", rootSyncNamespace, name),
    },
    labels: { "applyset.kubernetes.io/part-of": applySetId(sync) },
  });
  return { name, repo, claim };
}

test("deletes an undeclared ConfigMap that claims this sync, and leaves look-alikes and owned copies alone", async (t) => {
  const namespace = await testNamespace(t, "claims");
  const { name, repo, claim } = await syncedRootSync(t, {
    "config/a.yaml": configMap(namespace, "a", { key: "declared" }),
  });
  const a = await readConfigMap(namespace, "a");
  const cmId = (n: string) => ({ group: "", kind: "ConfigMap", namespace, name: n });
  const create = (
    n: string,
    metadata: { annotations: Record<string, string>; labels: Record<string, string> },
    more = {},
  ) =>
    coreApi().createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: n, ...metadata, ...more }, data: { weekday: "monday" } },
    });

  // Controls first: one watch stream delivers them before the claiming one.
  const copied = claim(cmId("copied"));
  await create("copied", {
    ...copied,
    annotations: { ...copied.annotations, "configsync.gke.io/resource-id": resourceId(cmId("a")) },
  });
  const other = claim(cmId("other-manager"));
  await create("other-manager", {
    ...other,
    annotations: {
      ...other.annotations,
      "configsync.gke.io/manager": managerAnnotationValue("RootSync", rootSyncNamespace, "someone-else"),
    },
  });
  await create("owned", claim(cmId("owned")), {
    ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "a", uid: a?.metadata?.uid ?? "" }],
  });
  const detached = claim(cmId("detached"));
  await create("detached", {
    ...detached,
    annotations: { ...detached.annotations, "client.lifecycle.config.k8s.io/deletion": "detach" },
  });
  await create("test-cm1", claim(cmId("test-cm1")));

  // Config Sync: "Remediator SHOULD delete test-cm1, because it says it's managed ... but it's not in the source".
  await eventually(async () => (await readConfigMap(namespace, "test-cm1")) === undefined, {
    what: "the claiming, undeclared test-cm1 deleted by the remediator",
    timeoutMs: 20_000,
  });
  await eventually(
    async () =>
      (await readConfigMap(namespace, "detached"))?.metadata?.annotations?.["configmanagement.gke.io/managed"] ===
      undefined,
    { what: "the detached claim released: Config Sync's metadata removed", timeoutMs: 20_000 },
  );
  // A full pass after them (a new commit) neither re-creates the deleted one nor touches the controls.
  await repo.write("config/b.yaml", configMap(namespace, "b", { key: "declared" }));
  await rootSynced(name, await repo.commit("b"));
  assert.equal(await readConfigMap(namespace, "test-cm1"), undefined, "the full pass re-created test-cm1");
  for (const kept of ["copied", "other-manager", "owned", "detached"])
    assert.ok((await readConfigMap(namespace, kept)) !== undefined, `${kept} was deleted`);
});

test("a claiming Namespace that Git does not declare is deleted only once it holds nothing", async (t) => {
  const declared = `claims-decl-${suffix()}`;
  const { name, repo, claim } = await syncedRootSync(t, {
    "config/ns.yaml": JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: declared } }),
  });
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: declared })
      .catch(() => undefined),
  );
  const held = `claims-held-${suffix()}`;
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: held })
      .catch(() => undefined),
  );
  await coreApi().createNamespace({ body: { metadata: { name: held } } });
  await coreApi().createNamespacedConfigMap({
    namespace: held,
    body: { metadata: { name: "tenant-data" }, data: { k: "v" } },
  });
  const emptyOne = `claims-empty-${suffix()}`;
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: emptyOne })
      .catch(() => undefined),
  );
  // The one that holds a ConfigMap claims first, so the empty one's deletion shows it was looked at.
  const heldClaim = claim({ group: "", kind: "Namespace", name: held });
  const live = await coreApi().readNamespace({ name: held });
  await coreApi().replaceNamespace({ name: held, body: { ...live, metadata: { ...live.metadata, ...heldClaim } } });
  await coreApi().createNamespace({
    body: { metadata: { name: emptyOne, ...claim({ group: "", kind: "Namespace", name: emptyOne }) } },
  });

  await eventually(async () => !(await namespaceExists(emptyOne)), {
    what: "the empty claiming Namespace deleted",
    timeoutMs: 20_000,
  });
  assert.equal(await namespaceExists(held), true, "a Namespace holding a ConfigMap was deleted");
  assert.ok((await readConfigMap(held, "tenant-data")) !== undefined);

  // Emptied: the next pass's end looks at the waiting claim again.
  await coreApi().deleteNamespacedConfigMap({ namespace: held, name: "tenant-data" });
  await repo.write("config/cm.yaml", configMap(declared, "c", { k: "v" }));
  await rootSynced(name, await repo.commit("c"));
  await eventually(async () => !(await namespaceExists(held)), {
    what: "the emptied claiming Namespace deleted",
    timeoutMs: 20_000,
  });
});

test("a hand-applied managed: disabled on an object Git declares enabled is corrected at once, with the drift", async (t) => {
  const namespace = await testNamespace(t, "claims-off");
  await syncedRootSync(t, { "config/a.yaml": configMap(namespace, "a", { key: "declared" }) });
  const live = await readConfigMap(namespace, "a");
  assert.ok(live !== undefined);
  await coreApi().replaceNamespacedConfigMap({
    namespace,
    name: "a",
    body: {
      ...live,
      metadata: {
        ...live.metadata,
        annotations: { ...live.metadata?.annotations, "configmanagement.gke.io/managed": "disabled" },
      },
      data: { key: "drifted" },
    },
  });
  // No commit, and the resync period (5 min) far off: only the remediator can do it.
  await eventually(
    async () => {
      const now = await readConfigMap(namespace, "a");
      return (
        now?.data?.["key"] === "declared" &&
        now.metadata?.annotations?.["configmanagement.gke.io/managed"] === "enabled"
      );
    },
    { what: "a's data and managed annotation restored from Git", timeoutMs: 20_000 },
  );
});
