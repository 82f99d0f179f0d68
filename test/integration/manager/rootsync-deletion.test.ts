import { test } from "node:test";
import assert from "node:assert/strict";
import { resourceGroupMapping } from "@driftless/applier";
import {
  Finalizer,
  ManagedAnnotation,
  ManagedLabel,
  ManagementAnnotationKeys,
  ManagementLabelKeys,
  UserAnnotation,
} from "@driftless/api";
import type { KubeObject } from "@driftless/kube";
import { denyByPolicy } from "../../support/admission-policy.ts";
import { eventually, suffix, TestRepo } from "../../support/index.ts";
import { grantRepoSyncReconciler } from "../../support/rbac.ts";
import {
  admin,
  conditionOf,
  configMap,
  createNamespace,
  createSync,
  getObject,
  getSync,
  Mapping,
  reconcilerPids,
  repoSyncObject,
  rootSyncObject,
  startManager,
  synced,
  systemNamespace,
} from "./helpers.ts";

const hold = "driftless.test/hold";
const mutation = UserAnnotation.LifecycleMutation;

/** The RootSync's ReconcilerFinalizerFailure once True, and the errors it lists (as Config Sync's condition does). */
async function finalizerFailure(rootName: string, during: string, timeoutMs: number) {
  const failure = await eventually(
    async () => {
      const condition = conditionOf(await getSync("RootSync", systemNamespace, rootName), "ReconcilerFinalizerFailure");
      return condition?.status === "True" ? condition : undefined;
    },
    { timeoutMs, what: `ReconcilerFinalizerFailure ${during}` },
  );
  const errors = (failure as { errors?: { code: string; errorMessage: string }[] }).errors ?? [];
  return { failure, errors };
}
test("RootSync deletion with Foreground deletes every managed object before the RootSync disappears", async (t) => {
  const manager = await startManager(t);
  const target = await createNamespace(t, "fg");
  const repo = await TestRepo.create(t);
  const names = ["a", "b", "c"];
  for (const name of names) await repo.write(`${name}.yaml`, configMap(name, target, { name }));
  const commit = await repo.commit("three config maps");
  const rootName = `root-${suffix()}`;
  await createSync(
    t,
    rootSyncObject(
      rootName,
      manager.scope,
      { repo: repo.url, branch: repo.branch },
      { "configsync.gke.io/deletion-propagation-policy": "Foreground" },
    ),
  );
  await synced("RootSync", systemNamespace, rootName, commit);
  const client = await admin();
  // A finalizer of our own holds `b` in Terminating, so the order is observable, not a race.
  await client.patch(Mapping.ConfigMap, target, "b", { metadata: { finalizers: [hold] } }, "merge");
  t.after(() =>
    client.patch(Mapping.ConfigMap, target, "b", { metadata: { finalizers: null } }, "merge").catch(() => undefined),
  );

  await client.delete(Mapping.RootSync, systemNamespace, rootName);
  await eventually(
    async () => (await getObject(Mapping.ConfigMap, target, "b"))?.metadata.deletionTimestamp !== undefined,
    { what: "b being deleted" },
  );
  await eventually(
    async () =>
      (await getObject(Mapping.ConfigMap, target, "a")) === undefined &&
      (await getObject(Mapping.ConfigMap, target, "c")) === undefined,
    { what: "a and c deleted" },
  );
  const waiting = await getSync("RootSync", systemNamespace, rootName);
  assert.ok(
    waiting?.metadata.deletionTimestamp !== undefined,
    "the RootSync went away while a managed object still existed",
  );
  assert.ok(
    waiting.metadata.finalizers?.includes("configsync.gke.io/reconciler"),
    "the RootSync no longer waits for its reconciler",
  );
  assert.equal(
    (await reconcilerPids(manager.scope, rootName)).length,
    1,
    "the reconciler must keep running until it is done",
  );

  // While b stays, the sync says so as Config Sync's finalizer does: a fixed message, each object in errors.
  const { failure, errors } = await finalizerFailure(rootName, "while b is held", 90_000);
  assert.equal(failure.reason, "DestroyFailure");
  assert.equal(failure.message, "Failed to delete managed resource objects");
  assert.deepEqual(
    errors.map((e) => [e.code, e.errorMessage]),
    [
      [
        "2009",
        `KNV2009: failed to wait for ConfigMap, ${target}/b: reconcile timeout\n\nFor more information, see https://g.co/cloud/acm-errors#knv2009`,
      ],
    ],
  );

  await client.patch(Mapping.ConfigMap, target, "b", { metadata: { finalizers: null } }, "merge");
  await eventually(async () => (await getSync("RootSync", systemNamespace, rootName)) === undefined, {
    timeoutMs: 60_000,
    what: "the RootSync deleted",
  });
  for (const name of names)
    assert.equal(await getObject(Mapping.ConfigMap, target, name), undefined, `${name} outlived the RootSync`);
  assert.equal(
    await getObject(resourceGroupMapping, systemNamespace, rootName),
    undefined,
    "the ResourceGroup is left",
  );
  await eventually(async () => (await reconcilerPids(manager.scope)).length === 0, {
    what: "the reconciler torn down",
  });
});

/** The Config Sync labels and annotations (as packages/api lists them, and its prefixes) an object carries. */
function configSyncMetadata(object: KubeObject): string[] {
  const ours = (key: string): boolean =>
    key.startsWith("configsync.gke.io/") || key.startsWith("configmanagement.gke.io/");
  return [
    ...Object.keys(object.metadata.annotations ?? {}).filter((k) => ManagementAnnotationKeys.includes(k) || ours(k)),
    ...Object.keys(object.metadata.labels ?? {}).filter((k) => ManagementLabelKeys.includes(k) || ours(k)),
  ];
}

for (const kind of ["RootSync", "RepoSync"] as const) {
  test(`${kind} deletion with Orphan (the default) waits for its reconciler, which leaves every managed object without Config Sync's metadata and deletes the ResourceGroup, as Config Sync does`, async (t) => {
    const manager = await startManager(t);
    const client = await admin();
    const target = await createNamespace(t, "orphan");
    const repo = await TestRepo.create(t);
    const namespace = kind === "RootSync" ? target : undefined;
    await repo.write(
      "a.yaml",
      configMap(
        "a",
        namespace,
        { keep: "me" },
        { labels: { app: "demo" }, annotations: { "example.com/note": "user" } },
      ),
    );
    await repo.write("b.yaml", configMap("b", namespace, { k: "v" }, { annotations: { [mutation]: "ignore" } }));
    const commit = await repo.commit("two config maps");
    let sync: { namespace: string; name: string };
    if (kind === "RootSync") {
      sync = { namespace: systemNamespace, name: `root-${suffix()}` };
      await createSync(t, rootSyncObject(sync.name, manager.scope, { repo: repo.url, branch: repo.branch }));
    } else {
      sync = { namespace: target, name: "repo-sync" };
      await grantRepoSyncReconciler(target);
      await createSync(t, repoSyncObject(target, sync.name, manager.scope, { repo: repo.url, branch: repo.branch }));
    }
    const live = await synced(kind, sync.namespace, sync.name, commit);
    assert.ok(live.metadata.finalizers?.includes(Finalizer.Reconciler), "no reconciler finalizer with Orphan");
    assert.equal(
      (await getObject(Mapping.ConfigMap, target, "a"))?.metadata.labels?.[ManagedLabel.ManagedBy],
      "configmanagement.gke.io",
    );
    assert.ok(await getObject(resourceGroupMapping, sync.namespace, sync.name), "no ResourceGroup");

    await client.delete(Mapping[kind], sync.namespace, sync.name);
    await eventually(async () => (await getSync(kind, sync.namespace, sync.name)) === undefined, {
      timeoutMs: 60_000,
      what: `the ${kind} deleted`,
    });
    const a = await getObject(Mapping.ConfigMap, target, "a");
    assert.ok(a !== undefined, "an orphaned object was deleted");
    assert.deepEqual(a["data"], { keep: "me" });
    assert.deepEqual(configSyncMetadata(a), [], "Config Sync's metadata left on an orphaned object");
    assert.deepEqual(a.metadata.labels, { app: "demo" }, "the object's own labels only");
    assert.deepEqual(a.metadata.annotations, { "example.com/note": "user" }, "the object's own annotations only");
    const b = await getObject(Mapping.ConfigMap, target, "b");
    assert.deepEqual(b?.metadata.annotations, { [mutation]: "ignore" }, "the mutation annotation stays, alone");
    assert.equal(
      await getObject(resourceGroupMapping, sync.namespace, sync.name),
      undefined,
      "the ResourceGroup is left",
    );
  });
}

test("Orphan deletion goes on past an object it cannot release, and holds the RootSync with ReconcilerFinalizerFailure naming it until it can, as Config Sync does", async (t) => {
  const manager = await startManager(t);
  const client = await admin();
  const target = await createNamespace(t, "orphanfail");
  const repo = await TestRepo.create(t);
  for (const name of ["a", "b"]) await repo.write(`${name}.yaml`, configMap(name, target, { name }));
  const commit = await repo.commit("two config maps");
  const rootName = `root-${suffix()}`;
  await createSync(t, rootSyncObject(rootName, manager.scope, { repo: repo.url, branch: repo.branch }));
  await synced("RootSync", systemNamespace, rootName, commit);
  // A policy engine that keeps `a` managed: its release (the first, in inventory order) is refused.
  const denial = `policy ${rootName}: a stays managed`;
  const lift = await denyByPolicy(t, rootName, {
    rule: { apiGroups: [""], apiVersions: ["v1"], operations: ["UPDATE"], resources: ["configmaps"] },
    when: `object.metadata.namespace == '${target}' && object.metadata.name == 'a' && !(has(object.metadata.annotations) && '${ManagedAnnotation.Manager}' in object.metadata.annotations)`,
    message: denial,
  });
  await eventually(
    async () => {
      const a = await getObject(Mapping.ConfigMap, target, "a");
      if (a === undefined) return false;
      const released = { ...a, metadata: { ...a.metadata, annotations: {} } };
      return client.replace(Mapping.ConfigMap, released, { dryRun: true }).then(
        () => false,
        (error: unknown) => String(error).includes(denial),
      );
    },
    { what: "the admission policy to be in force" },
  );

  await client.delete(Mapping.RootSync, systemNamespace, rootName);
  const { failure, errors } = await finalizerFailure(rootName, "while a cannot be released", 60_000);
  assert.equal(failure.reason, "DestroyFailure");
  assert.equal(failure.message, "Failed to delete managed resource objects");
  assert.deepEqual(
    errors.map((e) => e.code),
    ["2002"],
  );
  assert.match(errors[0]?.errorMessage ?? "", /^KNV2002: failed to patch object to remove metadata: .*a stays managed/);
  const b = await getObject(Mapping.ConfigMap, target, "b");
  assert.equal(b?.metadata.annotations?.[ManagedAnnotation.Manager], undefined, "b was not released past a's failure");
  assert.ok(await getObject(resourceGroupMapping, systemNamespace, rootName), "the ResourceGroup went before a");

  await lift();
  await eventually(async () => (await getSync("RootSync", systemNamespace, rootName)) === undefined, {
    timeoutMs: 60_000,
    what: "the RootSync deleted once a can be released",
  });
  const a = await getObject(Mapping.ConfigMap, target, "a");
  assert.deepEqual(a === undefined ? ["deleted"] : configSyncMetadata(a), [], "a is not released in place");
});
