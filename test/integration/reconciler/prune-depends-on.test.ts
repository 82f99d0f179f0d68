/**
 * depends-on when objects go, as Config Sync's applier and destroyer honour it: the dependent is deleted
 * first, and its dependency only once the dependent is gone. Config Sync documents this as the way to keep
 * a RepoSync's RoleBinding until the RepoSync (and its reconciler's deletion work) is done.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { createLogger } from "@driftless/sync";
import {
  coreApi,
  createRootSync,
  customApi,
  eventually,
  type JsonObject,
  rootSynced,
  rootSyncGone,
  rootSyncNamespace,
  rootSyncs,
  rootSyncStatus,
  startReconciler,
  statusCode,
  suffix,
  syncErrorsAt,
  testNamespace,
  TestRepo,
} from "../../support/index.ts";
import { admin, Mapping } from "../manager/helpers.ts";

const hold = "driftless.test/hold";
const json = (obj: unknown): string => JSON.stringify(obj);

function configMap(namespace: string, name: string, dependsOn?: string): unknown {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name,
      namespace,
      ...(dependsOn === undefined ? {} : { annotations: { "config.kubernetes.io/depends-on": dependsOn } }),
    },
    data: { name },
  };
}

async function readConfigMap(namespace: string, name: string): Promise<JsonObject | undefined> {
  try {
    return (await coreApi().readNamespacedConfigMap({ namespace, name })) as unknown as JsonObject;
  } catch (error) {
    if (statusCode(error) === 404) return undefined;
    throw error;
  }
}

/** A namespace holding `dependency` and `dependent` (depends-on `dependency`), declared in `config/`. */
async function declareBoth(repo: TestRepo, namespace: string): Promise<string> {
  await repo.write("config/ns.yaml", json({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }));
  await repo.write("config/dependency.yaml", json(configMap(namespace, "dependency")));
  await repo.write(
    "config/dependent.yaml",
    json(configMap(namespace, "dependent", `/namespaces/${namespace}/ConfigMap/dependency`)),
  );
  return repo.commit("a dependency and its dependent");
}

/** Our own finalizer holds the dependent in Terminating, so the order is observable, not a race. */
async function holdDependent(namespace: string): Promise<void> {
  await (await admin()).patch(Mapping.ConfigMap, namespace, "dependent", { metadata: { finalizers: [hold] } }, "merge");
}

async function releaseDependent(namespace: string): Promise<void> {
  await (await admin()).patch(Mapping.ConfigMap, namespace, "dependent", { metadata: { finalizers: null } }, "merge");
}

/** A repository declaring the dependent and its dependency in a namespace of its own, deleted after the test. */
async function bothDeclared(
  t: TestContext,
  prefix: string,
): Promise<{ name: string; namespace: string; repo: TestRepo; first: string }> {
  const id = suffix();
  const name = `${prefix}-${id}`;
  const namespace = `${prefix}-${id}`;
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined),
  );
  const repo = await TestRepo.create(t);
  return { name, namespace, repo, first: await declareBoth(repo, namespace) };
}

/** Lets the dependent go; then a later pass deletes the dependency and the sync's errors clear at `commit`. */
async function releaseAndSettle(namespace: string, name: string, commit: string): Promise<void> {
  await releaseDependent(namespace);
  await eventually(async () => (await readConfigMap(namespace, "dependency")) === undefined, {
    timeoutMs: 60_000,
    what: "the dependency deleted once its dependent is gone",
  });
  await eventually(
    async () => {
      const sync = (await rootSyncStatus(name))["sync"] as JsonObject | undefined;
      return sync?.["commit"] === commit && ((sync["errors"] ?? []) as JsonObject[]).length === 0;
    },
    { timeoutMs: 60_000, what: "the errors to clear" },
  );
}

test("a pass prunes a dependent before its dependency, and deletes the dependency only once the dependent is gone", async (t) => {
  const { name, namespace, repo, first } = await bothDeclared(t, "prune-dep");
  await createRootSync(name, repo, { spec: { override: { reconcileTimeout: "3s" } } });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, first);
  await holdDependent(namespace);
  t.after(() => releaseDependent(namespace).catch(() => undefined));

  await repo.remove("config/dependency.yaml");
  await repo.remove("config/dependent.yaml");
  const second = await repo.commit("both leave Git");
  const errors = await syncErrorsAt(name, second);
  const dependent = await readConfigMap(namespace, "dependent");
  assert.ok(
    (dependent?.["metadata"] as JsonObject | undefined)?.["deletionTimestamp"] !== undefined,
    "the dependent was not deleted",
  );
  assert.ok(
    (await readConfigMap(namespace, "dependency")) !== undefined,
    "the dependency was deleted while its dependent was still there",
  );
  assert.ok(
    errors.some(
      (e) =>
        e["code"] === "2009" &&
        e["errorMessage"] ===
          `KNV2009: skipped delete of ConfigMap, ${namespace}/dependency: dependent delete reconcile timeout: ${namespace}_dependent__ConfigMap\n\nFor more information, see https://g.co/cloud/acm-errors#knv2009`,
    ),
    `no skipped delete in ${JSON.stringify(errors)}`,
  );

  // Once the dependent is gone, a later pass deletes the dependency and the errors clear.
  await releaseAndSettle(namespace, name, second);
});

test("a dependent still Terminating after the pass's wait keeps holding its dependency in later passes, as Config Sync keeps a timed-out prune in its inventory", async (t) => {
  const { name, namespace, repo, first } = await bothDeclared(t, "prune-hold");
  await createRootSync(name, repo, { spec: { override: { reconcileTimeout: "2s" } } });
  const lines: string[] = [];
  await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { log: createLogger({ test: t.name }, { write: (line) => void lines.push(line) }) },
  );
  await rootSynced(name, first);
  await holdDependent(namespace);
  t.after(() => releaseDependent(namespace).catch(() => undefined));

  await repo.remove("config/dependency.yaml");
  await repo.remove("config/dependent.yaml");
  const second = await repo.commit("both leave Git");
  // The pass's end, so that the lines below are all of its lines.
  await syncErrorsAt(name, second);
  // The wait for the dependent took the whole reconcileTimeout: the wait after prune does not start another.
  assert.ok(
    lines.some((line) => line.includes("prune reconcile timeout: deleted objects still there")),
    "the dependent was not reported still there",
  );
  assert.ok(
    !lines.some((line) => line.includes("waiting for pruned objects to be deleted")),
    "the dependent was waited for again after its depends-on wait had timed out",
  );
  // A later pass (a new commit), while the dependent is still held in Terminating.
  await repo.write("config/other.yaml", json(configMap(namespace, "other")));
  const third = await repo.commit("an unrelated ConfigMap");
  const skipped = `KNV2009: skipped delete of ConfigMap, ${namespace}/dependency: dependent delete reconcile timeout: ${namespace}_dependent__ConfigMap\n\nFor more information, see https://g.co/cloud/acm-errors#knv2009`;
  const errors = await syncErrorsAt(name, third);
  assert.ok(
    ((await readConfigMap(namespace, "dependent"))?.["metadata"] as JsonObject | undefined)?.["deletionTimestamp"] !==
      undefined,
    "the dependent is not held in Terminating",
  );
  assert.ok(
    (await readConfigMap(namespace, "dependency")) !== undefined,
    "a later pass deleted the dependency while its dependent was still Terminating",
  );
  assert.ok(
    errors.some((e) => e["errorMessage"] === skipped),
    `no skipped delete in ${JSON.stringify(errors)}`,
  );

  await releaseAndSettle(namespace, name, third);
});

test("Foreground deletion of a sync deletes a dependent before its dependency, and the dependency only once the dependent is gone", async (t) => {
  const { name, namespace, repo, first } = await bothDeclared(t, "fg-dep");
  await createRootSync(name, repo, { annotations: { "configsync.gke.io/deletion-propagation-policy": "Foreground" } });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, first);
  await holdDependent(namespace);
  t.after(() => releaseDependent(namespace).catch(() => undefined));

  await customApi().deleteNamespacedCustomObject({ ...rootSyncs, name });
  const failure = await eventually(
    async () => {
      const conditions = ((await rootSyncStatus(name))["conditions"] ?? []) as JsonObject[];
      return conditions.find((c) => c["type"] === "ReconcilerFinalizerFailure" && c["status"] === "True");
    },
    { timeoutMs: 90_000, what: "ReconcilerFinalizerFailure while the dependent is held" },
  );
  assert.ok(
    (await readConfigMap(namespace, "dependency")) !== undefined,
    "the dependency was deleted while its dependent was still there",
  );
  const errors = ((failure["errors"] ?? []) as JsonObject[]).map((e) => e["errorMessage"]);
  assert.ok(
    errors.includes(
      `KNV2009: skipped delete of ConfigMap, ${namespace}/dependency: dependent delete reconcile timeout: ${namespace}_dependent__ConfigMap\n\nFor more information, see https://g.co/cloud/acm-errors#knv2009`,
    ),
    `no skipped delete in ${JSON.stringify(errors)}`,
  );

  await releaseDependent(namespace);
  await rootSyncGone(name, 90_000);
  assert.equal(await readConfigMap(namespace, "dependency"), undefined, "the dependency outlived the RootSync");
  assert.equal(await readConfigMap(namespace, "dependent"), undefined, "the dependent outlived the RootSync");
});

/** A Deployment of one Pod (labelled `app: <name>`), which no kubelet here ever runs. */
function deployment(namespace: string, name: string, podFinalizers: readonly string[] = []): unknown {
  const labels = { app: name };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels, ...(podFinalizers.length === 0 ? {} : { finalizers: podFinalizers }) },
        spec: { containers: [{ name: "c", image: "busybox" }] },
      },
    },
  };
}

test("Foreground deletion of a sync deletes what its objects own first: the RootSync stays until a Deployment's Pods are gone", async (t) => {
  const namespace = await testNamespace(t, "fg-pods");
  const name = `fg-pods-${suffix()}`;
  const repo = await TestRepo.create(t);
  // Its Pod carries a finalizer, as a Pod a kubelet is still stopping would be held.
  await repo.write("config/deployment.yaml", json(deployment(namespace, "held", [hold])));
  const commit = await repo.commit("a Deployment");
  // No kubelet runs the Pod, so the Deployment never becomes available: a short wait lets the commit count as synced.
  await createRootSync(name, repo, {
    annotations: { "configsync.gke.io/deletion-propagation-policy": "Foreground" },
    spec: { override: { reconcileTimeout: "2s" } },
  });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, commit);
  const pods = async (): Promise<string[]> =>
    (await coreApi().listNamespacedPod({ namespace, labelSelector: "app=held" })).items.map(
      (p) => p.metadata?.name ?? "",
    );
  const [pod] = await eventually(async () => ((await pods()).length > 0 ? await pods() : undefined), {
    what: "the Deployment's Pod",
  });
  const release = (): Promise<unknown> =>
    coreApi().patchNamespacedPod({
      namespace,
      name: pod ?? "",
      body: [{ op: "remove", path: "/metadata/finalizers" }],
    });
  t.after(() => release().catch(() => undefined));

  await customApi().deleteNamespacedCustomObject({ ...rootSyncs, name });
  // The Pod is being deleted (the Deployment's Foreground deletion reached it) and the RootSync waits for it.
  await eventually(
    async () =>
      (await coreApi().readNamespacedPod({ namespace, name: pod ?? "" })).metadata?.deletionTimestamp !== undefined,
    { what: "the Pod to be deleted" },
  );
  const waiting = await customApi()
    .getNamespacedCustomObject({ ...rootSyncs, name })
    .then(
      () => true,
      (error: unknown) => (statusCode(error) === 404 ? false : Promise.reject(error)),
    );
  assert.equal(waiting, true, "the RootSync went away while its Deployment's Pod was still there");
  await release();
  await rootSyncGone(name);
});

test("deleting a sync whose pass is waiting for an object to become Current ends that wait: the sync goes in seconds, not after reconcileTimeout", async (t) => {
  const namespace = await testNamespace(t, "wait-del");
  const name = `wait-del-${suffix()}`;
  const repo = await TestRepo.create(t);
  await repo.write("config/deployment.yaml", json(deployment(namespace, "never-ready")));
  await repo.commit("a Deployment no kubelet will run");
  // reconcileTimeout left at its default, 5 minutes: the first pass waits that long for the Deployment.
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await eventually(
    () =>
      coreApi()
        .listNamespacedPod({ namespace })
        .then((pods) => pods.items.length > 0),
    { what: "the Deployment applied (its Pod created)" },
  );

  await customApi().deleteNamespacedCustomObject({ ...rootSyncs, name });
  await rootSyncGone(name, 60_000);
});
