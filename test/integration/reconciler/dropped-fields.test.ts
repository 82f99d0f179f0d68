/**
 * A declaration the API server would not store as written: an unknown field (refused, as Config Sync's
 * server-side apply refuses it: KNV2009 for that object alone), a list repeating a merge key (stored as
 * sent, the API server only warns), a field the server clears (a feature gate off). None of them may be
 * written again at every pass, nor count as a correction towards a fight (KNV2005).
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { AppsV1Api } from "@kubernetes/client-node";
import { WriteVerbs, type ResourceMapping } from "@driftless/kube";
import type { Reconciler } from "@driftless/sync";
import {
  coreApi,
  createRootSync,
  eventually,
  kubeConfig,
  rootSynced,
  rootSyncNamespace,
  rootSyncStatus,
  startReconciler,
  suffix,
  syncErrorsAt,
  testNamespace,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";
import { adminClient } from "../kube/support.ts";

const configMap = (namespace: string, name: string, extra: JsonObject = {}): string =>
  JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data: { a: "1" }, ...extra });

/** A Deployment of no replicas (Current at once: the control plane runs no kubelet) with `podSpec` in its template. */
const deployment = (namespace: string, name: string, podSpec: JsonObject = {}): string =>
  JSON.stringify({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "web", image: "nginx" }], ...podSpec },
      },
    },
  });

/** Write requests the API server accepted for `resource` in `namespace`, counted from now on. */
function acceptedWrites(t: TestContext, reconciler: Reconciler, namespace: string, resource: string): () => number {
  let count = 0;
  const prefix = `/namespaces/${namespace}/${resource}`;
  const unsubscribe = reconciler.client.requests.onRequest((verb, status, _ms, path) => {
    if (WriteVerbs.has(verb) && status > 0 && status < 400 && path.includes(prefix)) count++;
  });
  t.after(unsubscribe);
  return () => count;
}

/** PATCH requests the reconciler sent to `path`, counted from now on. */
function patchesOf(t: TestContext, reconciler: Reconciler, path: string): () => number {
  let count = 0;
  const unsubscribe = reconciler.client.requests.onRequest((verb, _status, _ms, sent) => {
    if (verb === "patch" && sent.endsWith(path)) count++;
  });
  t.after(unsubscribe);
  return () => count;
}

/** Waits for `n` more full passes (a resync period of 0 makes every poll one). */
async function passes(reconciler: Reconciler, n: number): Promise<void> {
  const base = reconciler.passCount;
  await eventually(() => reconciler.passCount >= base + n, { timeoutMs: 60_000, what: `${n} more passes` });
}

const deploymentMapping: ResourceMapping = {
  group: "apps",
  version: "v1",
  kind: "Deployment",
  resource: "deployments",
  namespaced: true,
  verbs: ["get", "patch"],
};

async function fightReported(name: string): Promise<boolean> {
  const errors = (((await rootSyncStatus(name))["sync"] as JsonObject | undefined)?.["errors"] ?? []) as JsonObject[];
  return codes(errors).includes("2005");
}

const codes = (errors: readonly JsonObject[]): string[] => errors.map((e) => String(e["code"])).sort();

test("an unknown field fails its object alone with KNV2009 (the server's strict decoding error), the rest applies, and no pass writes it again", async (t) => {
  const namespace = await testNamespace(t, "unknown-field");
  const name = `unknown-${suffix()}`;
  const repo = await TestRepo.create(t);
  await repo.write("config/bad.yaml", configMap(namespace, "bad", { spec: { x: "y" } }));
  await repo.write("config/good.yaml", configMap(namespace, "good"));
  await createRootSync(name, repo);
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { resyncPeriodMs: 0 },
  );
  const commit = await repo.commit("a ConfigMap with an unknown top-level field");

  const errors = await syncErrorsAt(name, commit);
  assert.deepEqual(codes(errors), ["2009"], JSON.stringify(errors));
  assert.match(
    String(errors[0]?.["errorMessage"]),
    /ConfigMap, .*\/bad: .*strict decoding error: unknown field "spec"/,
  );
  assert.equal(
    (await rootSyncStatus(name))["lastSyncedCommit"],
    undefined,
    "a commit with a refused object is not synced",
  );
  const good = await coreApi().readNamespacedConfigMap({ namespace, name: "good" });
  assert.deepEqual(good.data, { a: "1" }, "the rest of the commit is applied");

  const writes = acceptedWrites(t, reconciler, namespace, "configmaps");
  await passes(reconciler, 4);
  assert.equal(writes(), 0, "a pass wrote a ConfigMap again");
});

test("an empty status and a null creationTimestamp (as `kubectl create --dry-run -o yaml` writes them) are dropped before the write, as Config Sync's applier drops them: a ConfigMap declaring them syncs, and no pass writes it again", async (t) => {
  const namespace = await testNamespace(t, "empty-status");
  const name = `empty-status-${suffix()}`;
  const repo = await TestRepo.create(t);
  await repo.write("config/empty.yaml", configMap(namespace, "empty", { status: {} }));
  await repo.write(
    "config/null.yaml",
    JSON.stringify({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "null", namespace, creationTimestamp: null },
      data: { a: "1" },
      status: null,
    }),
  );
  await createRootSync(name, repo);
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { resyncPeriodMs: 0 },
  );
  // Sent as declared, both were refused: `strict decoding error: unknown field "status"` (KNV2009).
  await rootSynced(name, await repo.commit("ConfigMaps with an empty status"));
  for (const cm of ["empty", "null"])
    assert.deepEqual((await coreApi().readNamespacedConfigMap({ namespace, name: cm })).data, { a: "1" });

  const writes = acceptedWrites(t, reconciler, namespace, "configmaps");
  await passes(reconciler, 4);
  assert.equal(writes(), 0, "a pass wrote a ConfigMap again");
});

test("a Deployment repeating an env name is created once and never written again, and fails nothing", async (t) => {
  const namespace = await testNamespace(t, "duplicate-env");
  const name = `dup-env-${suffix()}`;
  const repo = await TestRepo.create(t);
  const env = [
    { name: "A", value: "1" },
    { name: "B", value: "2" },
    { name: "A", value: "3" },
  ];
  await repo.write(
    "config/web.yaml",
    deployment(namespace, "web", { containers: [{ name: "web", image: "nginx", env }] }),
  );
  await createRootSync(name, repo);
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { resyncPeriodMs: 0 },
  );
  const writes = acceptedWrites(t, reconciler, namespace, "deployments");
  await rootSynced(name, await repo.commit("env A, B, A"));

  await passes(reconciler, 4);
  assert.equal(writes(), 1, "written after its creation (each write a new rollout)");
  const sync = (await rootSyncStatus(name))["sync"] as JsonObject;
  assert.deepEqual(sync["errors"] ?? [], []);
  const live = await kubeConfig("admin").makeApiClient(AppsV1Api).readNamespacedDeployment({ namespace, name: "web" });
  assert.equal(live.metadata?.generation, 1);
  assert.deepEqual(JSON.parse(JSON.stringify(live.spec?.template.spec?.containers[0]?.env)), env);
});

test("a field the API server clears, beside another writer's annotation changes, is no fight (KNV2005)", async (t) => {
  const namespace = await testNamespace(t, "cleared-field");
  const name = `cleared-${suffix()}`;
  const repo = await TestRepo.create(t);
  // The HostnameOverride feature gate is off (alpha in 1.34): the server clears the field, Strict lets it through.
  await repo.write("config/web.yaml", deployment(namespace, "web", { hostnameOverride: "other" }));
  await repo.write("config/barrier.yaml", deployment(namespace, "barrier"));
  await createRootSync(name, repo);
  const reconciler = await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  const apps = kubeConfig("admin").makeApiClient(AppsV1Api);
  await rootSynced(name, await repo.commit("a Deployment with a field the server clears"));

  // Someone annotates it, more times than the fight threshold, each time once the remediator has answered.
  const other = await adminClient(t);
  const corrections = patchesOf(t, reconciler, `/namespaces/${namespace}/deployments/web`);
  for (let round = 0; round < 8; round++) {
    const before = corrections();
    await other.patch(
      deploymentMapping,
      namespace,
      "web",
      { metadata: { annotations: { round: String(round) } } },
      "merge",
    );
    // A paused object (a fight) is corrected no more: the assertion below says so.
    await eventually(async () => corrections() > before || (await fightReported(name)), {
      what: `the correction of change ${round}`,
    });
  }
  // Events of one type arrive in order: once the barrier is re-created, every change before it was decided.
  const before = (await apps.readNamespacedDeployment({ namespace, name: "barrier" })).metadata?.uid;
  await apps.deleteNamespacedDeployment({ namespace, name: "barrier" });
  await eventually(
    async () => {
      const now = await apps.readNamespacedDeployment({ namespace, name: "barrier" }).catch(() => undefined);
      return now?.metadata?.uid !== undefined && now.metadata.uid !== before;
    },
    { what: "the barrier re-created by drift correction" },
  );
  await repo.write("config/later.yaml", configMap(namespace, "later"));
  const later = await repo.commit("another object");
  const sync = await eventually(
    async () => {
      const reported = (await rootSyncStatus(name))["sync"] as JsonObject | undefined;
      return reported?.["commit"] === later ? reported : undefined;
    },
    { what: `RootSync ${name} to report the pass on ${later.slice(0, 7)}` },
  );
  assert.deepEqual(sync["errors"] ?? [], [], "a write the server kept nothing of counted as a correction");
});
