/**
 * Deletion never takes what should stay: a Namespace with something left in it, an object the
 * source releases with `managed: disabled`, an object that changed owner between our read and
 * our delete, and objects another sync owns when a sync is deleted with Orphan.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { NamespaceInUsePolicy, prune, PruneOperation, type PruneOptions, type SyncIdentity } from "@driftless/applier";
import { ManagedAnnotation, inventoryId } from "@driftless/api";
import { RestMapper, type KubeObject } from "@driftless/kube";
import { LAST_APPLIED_ANNOTATION } from "@driftless/objectmatcher";
import { RbacAuthorizationV1Api } from "@kubernetes/client-node";
import {
  coreApi,
  createRootSync,
  customApi,
  eventually,
  kubeConfig,
  rootSynced,
  rootSyncGone,
  rootSyncNamespace,
  rootSyncs,
  startReconciler,
  statusCode,
  suffix,
  syncErrorsAt,
  testNamespace,
  TestRepo,
} from "../../support/index.ts";
import { adminClient, configMaps } from "../kube/support.ts";

const json = (obj: unknown): string => JSON.stringify(obj);

function configMap(namespace: string, name: string, annotations: Record<string, string> = {}): unknown {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace, annotations }, data: { k: name } };
}

async function configMapExists(namespace: string, name: string): Promise<boolean> {
  try {
    await coreApi().readNamespacedConfigMap({ namespace, name });
    return true;
  } catch (error) {
    if (statusCode(error) === 404) return false;
    throw error;
  }
}

async function namespacePhase(name: string): Promise<string | undefined> {
  try {
    return (await coreApi().readNamespace({ name })).status?.phase ?? "Active";
  } catch (error) {
    if (statusCode(error) === 404) return undefined;
    throw error;
  }
}

/** A Namespace with a detached ConfigMap and an ordinary one, all three declared by a new RootSync. */
async function syncNamespaceWithDetachedObject(
  t: Parameters<typeof startReconciler>[0],
  annotations: Record<string, string> = {},
): Promise<{ name: string; namespace: string; repo: TestRepo }> {
  const id = suffix();
  const name = `nsuse-${id}`;
  const namespace = `nsuse-${id}`;
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined),
  );
  const repo = await TestRepo.create(t);
  await repo.write("config/ns.yaml", json({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }));
  await repo.write(
    "config/kept.yaml",
    json(configMap(namespace, "kept", { "client.lifecycle.config.k8s.io/deletion": "detach" })),
  );
  await repo.write("config/other.yaml", json(configMap(namespace, "other")));
  const first = await repo.commit("a namespace, a detached config map and another");
  await createRootSync(name, repo, { annotations });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, first);
  return { name, namespace, repo };
}

test("a Namespace that leaves Git while a detached object in it stays is kept and reported; the rest is pruned", async (t) => {
  const { name, namespace, repo } = await syncNamespaceWithDetachedObject(t);

  await repo.remove("config");
  // An unrelated object keeps the source from being empty (KNV2006 would refuse the prune).
  await repo.write(
    "config/anchor.yaml",
    json({ apiVersion: "v1", kind: "Namespace", metadata: { name: `${namespace}-anchor` } }),
  );
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: `${namespace}-anchor` })
      .catch(() => undefined),
  );
  const second = await repo.commit("remove the namespace and both config maps");
  const errors = await syncErrorsAt(name, second);

  assert.ok(
    // Config Sync's code and words.
    errors.some(
      (e) =>
        String(e["errorMessage"]).includes(
          `skipped delete of Namespace, /${namespace}: namespace still in use: ${namespace}`,
        ) && e["code"] === "2009",
    ),
    `no "namespace still in use" error in ${JSON.stringify(errors)}`,
  );
  assert.equal(await configMapExists(namespace, "other"), false, "the other ConfigMap was not pruned");
  assert.equal(await configMapExists(namespace, "kept"), true, "the detached ConfigMap was deleted");
  assert.equal(await namespacePhase(namespace), "Active", "the Namespace holding a detached object was deleted");
  const kept = await coreApi().readNamespacedConfigMap({ namespace, name: "kept" });
  assert.equal(
    kept.metadata?.annotations?.[ManagedAnnotation.Manager],
    undefined,
    "the detached object is still managed",
  );

  // Once nothing that stays is left in it, the next pass deletes the Namespace.
  await coreApi().deleteNamespacedConfigMap({ namespace, name: "kept" });
  await eventually(async () => (await namespacePhase(namespace)) !== "Active", {
    timeoutMs: 60_000,
    what: "the emptied Namespace to be pruned",
  });
});

test("Foreground deletion of a RootSync leaves a Namespace that still holds a detached object, released", async (t) => {
  const { name, namespace } = await syncNamespaceWithDetachedObject(t, {
    "configsync.gke.io/deletion-propagation-policy": "Foreground",
  });

  await customApi().deleteNamespacedCustomObject({ ...rootSyncs, name });
  await rootSyncGone(name);
  assert.equal(await configMapExists(namespace, "other"), false, "Foreground left a managed object behind");
  assert.equal(await configMapExists(namespace, "kept"), true, "the detached ConfigMap was deleted");
  assert.equal(await namespacePhase(namespace), "Active", "the Namespace holding a detached object was deleted");
  const ns = await coreApi().readNamespace({ name: namespace });
  assert.equal(
    ns.metadata?.annotations?.[ManagedAnnotation.OwningInventory],
    undefined,
    "the kept Namespace is still ours",
  );
});

test("managed: disabled releases the live object: our metadata goes, and removing its file later deletes nothing", async (t) => {
  const id = suffix();
  const name = `disabled-${id}`;
  const namespace = await testNamespace(t, "disabled");
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", json(configMap(namespace, "a")));
  await repo.write("config/b.yaml", json(configMap(namespace, "b")));
  const first = await repo.commit("two config maps");
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, first);

  await repo.write("config/a.yaml", json(configMap(namespace, "a", { "configmanagement.gke.io/managed": "disabled" })));
  const second = await repo.commit("stop managing a");
  await rootSynced(name, second);
  const released = await eventually(
    async () => {
      const cm = await coreApi().readNamespacedConfigMap({ namespace, name: "a" });
      return cm.metadata?.annotations?.[ManagedAnnotation.OwningInventory] === undefined ? cm : undefined;
    },
    { what: "a to lose its owning-inventory annotation" },
  );
  const annotations = released.metadata?.annotations ?? {};
  for (const key of [
    ManagedAnnotation.Managed,
    ManagedAnnotation.Manager,
    ManagedAnnotation.ResourceId,
    ManagedAnnotation.Token,
    ManagedAnnotation.SourcePath,
    LAST_APPLIED_ANNOTATION,
  ])
    assert.equal(annotations[key], undefined, `${key} left on a released object`);
  assert.equal(released.metadata?.labels?.["app.kubernetes.io/managed-by"], undefined);
  const group = (await customApi().getNamespacedCustomObject({
    group: "kpt.dev",
    version: "v1alpha1",
    namespace: rootSyncNamespace,
    plural: "resourcegroups",
    name,
  })) as { spec?: { resources?: { name: string }[] } };
  assert.deepEqual(
    (group.spec?.resources ?? []).map((r) => r.name),
    ["b"],
    "the released object is still in the ResourceGroup",
  );

  await repo.remove("config/a.yaml");
  const third = await repo.commit("remove a's file");
  await rootSynced(name, third);
  assert.equal(await configMapExists(namespace, "a"), true, "removing a released object's file deleted it");
});

const sync: SyncIdentity = { kind: "RootSync", namespace: rootSyncNamespace, name: "prune-race" };

function owned(namespace: string, name: string, by: SyncIdentity): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name,
      namespace,
      labels: { "app.kubernetes.io/managed-by": "configmanagement.gke.io" },
      annotations: {
        [ManagedAnnotation.Managed]: "enabled",
        [ManagedAnnotation.OwningInventory]: inventoryId(by.namespace, by.name),
      },
    },
    data: { k: "v" },
  };
}

test("prune does not delete an object whose owner changed between its read and its delete", async (t) => {
  const namespace = await testNamespace(t, "race");
  const client = await adminClient(t);
  const other: SyncIdentity = { kind: "RepoSync", namespace, name: "taker" };
  await client.create(configMaps, owned(namespace, "contested", sync));
  // Another sync takes the object over right after prune reads it.
  let tookOver = false;
  const racing = new Proxy(client, {
    get(target, property, receiver) {
      if (property !== "get") {
        // Bound to the client itself: its methods use private fields, which a proxy does not have.
        const value = Reflect.get(target, property, receiver) as unknown;
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      }
      return async (...args: Parameters<typeof client.get>) => {
        const read = await target.get(...args);
        if (!tookOver && read !== undefined) {
          tookOver = true;
          const takenOver = owned(namespace, "contested", other);
          takenOver.metadata.resourceVersion = read.metadata.resourceVersion;
          await target.replace(configMaps, takenOver);
        }
        return read;
      };
    },
  });
  const options: PruneOptions = {
    client: racing,
    mapper: new RestMapper(client),
    sync,
    lastAppliedAnnotation: LAST_APPLIED_ANNOTATION,
    namespaceInUse: () => Promise.resolve(false),
    namespaceInUsePolicy: NamespaceInUsePolicy.Keep,
  };
  const [outcome] = await prune([{ group: "", kind: "ConfigMap", namespace, name: "contested" }], options);
  assert.ok(tookOver, "the takeover did not happen between the read and the delete");
  assert.equal(outcome?.operation, PruneOperation.Abandoned);
  const live = await client.get(configMaps, namespace, "contested");
  assert.equal(
    live?.metadata.annotations?.[ManagedAnnotation.OwningInventory],
    inventoryId(other.namespace, other.name),
    "the object the other sync took over was deleted",
  );
});

test("Orphan deletion of a RootSync leaves the metadata of objects another sync owns now", async (t) => {
  const id = suffix();
  const name = `orphan-${id}`;
  const namespace = await testNamespace(t, "orphan");
  const repo = await TestRepo.create(t);
  await repo.write("config/mine.yaml", json(configMap(namespace, "mine")));
  await repo.write("config/taken.yaml", json(configMap(namespace, "taken")));
  const commit = await repo.commit("two config maps");
  await createRootSync(name, repo);
  const reconciler = await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, commit);
  // Stop correcting drift: the takeover below is done by hand, as another sync would do it.
  await reconciler.stop(5_000);

  const client = await adminClient(t);
  const taker: SyncIdentity = { kind: "RepoSync", namespace, name: "taker" };
  const live = await client.get(configMaps, namespace, "taken");
  assert.ok(live !== undefined);
  await client.replace(configMaps, {
    ...live,
    metadata: {
      ...live.metadata,
      annotations: {
        ...live.metadata.annotations,
        [ManagedAnnotation.OwningInventory]: inventoryId(taker.namespace, taker.name),
        [ManagedAnnotation.Manager]: `${namespace}_taker`,
      },
    },
  });

  // The first reconciler added its finalizer, whatever the policy, as Config Sync does: the next one finalizes.
  await customApi().deleteNamespacedCustomObject({ ...rootSyncs, name });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSyncGone(name);
  const mine = await coreApi().readNamespacedConfigMap({ namespace, name: "mine" });
  assert.equal(mine.metadata?.annotations?.[ManagedAnnotation.OwningInventory], undefined, "Orphan left our metadata");
  const taken = await coreApi().readNamespacedConfigMap({ namespace, name: "taken" });
  assert.equal(
    taken.metadata?.annotations?.[ManagedAnnotation.OwningInventory],
    inventoryId(taker.namespace, taker.name),
    "Orphan stripped the metadata of an object another sync owns",
  );
  assert.equal(taken.metadata?.annotations?.[ManagedAnnotation.Manager], `${namespace}_taker`);
});

test("a commit that would delete all of two or more managed Namespaces is refused (KNV2006) and deletes nothing; all but one, then the last, go", async (t) => {
  const id = suffix();
  const name = `allns-${id}`;
  const namespaces = [`allns-a-${id}`, `allns-b-${id}`];
  t.after(() =>
    Promise.all(
      namespaces.map((n) =>
        coreApi()
          .deleteNamespace({ name: n })
          .catch(() => undefined),
      ),
    ),
  );
  const namespaceFile = (n: string): string =>
    json({ apiVersion: "v1", kind: "Namespace", metadata: { name: n, labels: { team: "a" } } });
  const role = json({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: `allns-${id}` },
    rules: [],
  });
  t.after(() =>
    kubeConfig("admin")
      .makeApiClient(RbacAuthorizationV1Api)
      .deleteClusterRole({ name: `allns-${id}` })
      .catch(() => undefined),
  );
  const repo = await TestRepo.create(t);
  for (const n of namespaces) await repo.write(`config/${n}.yaml`, namespaceFile(n));
  await repo.write("config/role.yaml", role);
  const first = await repo.commit("two namespaces and a cluster role");
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, first);

  // Both Namespaces leave Git, the ClusterRole stays: the source is not empty, yet every Namespace would go.
  for (const n of namespaces) await repo.remove(`config/${n}.yaml`);
  const both = await repo.commit("remove both namespaces");
  const errors = await syncErrorsAt(name, both);
  assert.ok(
    errors.some(
      (e) =>
        e["code"] === "2006" &&
        String(e["errorMessage"]).includes(`New commit would delete all Namespaces [${namespaces.join(" ")}]`),
    ),
    json(errors),
  );
  for (const n of namespaces) assert.equal(await namespacePhase(n), "Active", `${n} was deleted`);
  // Everything leaves Git: the same failsafe on status.sync, as Config Sync reports it (not the empty-source guard).
  await repo.remove("config/role.yaml");
  await repo.write("config/README.md", "nothing declared\n");
  const emptied = await syncErrorsAt(name, await repo.commit("remove everything"));
  assert.ok(
    emptied.some(
      (e) => e["code"] === "2006" && String(e["errorMessage"]).includes("New commit would delete all Namespaces"),
    ),
    json(emptied),
  );
  for (const n of namespaces) assert.equal(await namespacePhase(n), "Active", `${n} was deleted`);
  await repo.write("config/role.yaml", role);
  // The refused commit is not what the remediator guards: the last synced one still is, as in Config Sync.
  const namespaceMapping = {
    group: "",
    version: "v1",
    kind: "Namespace",
    resource: "namespaces",
    namespaced: false,
    verbs: [],
  };
  await (
    await adminClient(t)
  ).patch(namespaceMapping, undefined, namespaces[0] ?? "", { metadata: { labels: { team: "by-hand" } } }, "merge");
  await eventually(
    async () => (await coreApi().readNamespace({ name: namespaces[0] ?? "" })).metadata?.labels?.["team"] === "a",
    { what: "the drift on a Namespace of the last synced commit to be corrected" },
  );

  // All but one: applied, the first one goes.
  await repo.write(`config/${namespaces[1]}.yaml`, namespaceFile(namespaces[1] ?? ""));
  await rootSynced(name, await repo.commit("keep the second namespace"));
  await eventually(async () => (await namespacePhase(namespaces[0] ?? "")) !== "Active", {
    what: "the first namespace to go",
  });
  // Then the last one: one Namespace managed is not "all of two or more".
  await repo.remove(`config/${namespaces[1]}.yaml`);
  await rootSynced(name, await repo.commit("remove the last namespace"));
  await eventually(async () => (await namespacePhase(namespaces[1] ?? "")) !== "Active", {
    what: "the last namespace to go",
  });
});

test("an object the API server refuses for good does not hold back the prune of what left Git, as in Config Sync", async (t) => {
  const namespace = await testNamespace(t, "refused");
  const name = `refused-prune-${suffix()}`;
  const frozen = (value: string): string =>
    json({ ...(configMap(namespace, "frozen") as object), immutable: true, data: { k: value } });
  const repo = await TestRepo.create(t);
  await repo.write("config/frozen.yaml", frozen("1"));
  await repo.write("config/leaving.yaml", json(configMap(namespace, "leaving")));
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, await repo.commit("an immutable ConfigMap and another"));

  // One commit changes the immutable data (refused with 422, at every pass) and removes the other object.
  await repo.write("config/frozen.yaml", frozen("2"));
  await repo.remove("config/leaving.yaml");
  const errors = await syncErrorsAt(name, await repo.commit("refused change, removed object"));
  assert.deepEqual(
    errors.map((e) => e["code"]),
    ["2009"],
  );
  await eventually(async () => !(await configMapExists(namespace, "leaving")), {
    what: "the removed ConfigMap to be pruned despite the refused one",
  });
});
