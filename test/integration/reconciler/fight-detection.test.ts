/**
 * A fight (KNV2005) is another writer undoing what driftless wrote, as Config Sync counts it: only
 * corrections that wrote something count. Changes driftless cannot or need not write back (a
 * declaration the API server refuses, the status a controller keeps writing) are no fight.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { AutoscalingV2Api } from "@kubernetes/client-node";
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
import { scrape, valueOf } from "../monitoring/scrape.ts";

const configMap = (namespace: string, name: string, data: Record<string, string>, immutable = false): string =>
  JSON.stringify({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace },
    data,
    ...(immutable ? { immutable: true } : {}),
  });

const codes = (errors: readonly JsonObject[]): string[] => errors.map((e) => String(e["code"])).sort();

/**
 * Deletes an object and waits for the remediator to re-create it: events of one type come through
 * one watch in order, so every change made before to another object of that type and version has
 * been decided by then.
 */
async function remediatorCaughtUp(
  uid: () => Promise<string | undefined>,
  remove: () => Promise<unknown>,
): Promise<void> {
  const before = await uid();
  await remove();
  await eventually(
    async () => {
      const now = await uid().catch(() => undefined);
      return now !== undefined && now !== before;
    },
    // Seconds alone; a CI machine shared with other test runs took over 30 s once.
    { timeoutMs: 60_000, what: "an object re-created by drift correction" },
  );
}

function configMapBarrier(namespace: string): Promise<void> {
  return remediatorCaughtUp(
    async () => (await coreApi().readNamespacedConfigMap({ namespace, name: "barrier" })).metadata?.uid,
    () => coreApi().deleteNamespacedConfigMap({ namespace, name: "barrier" }),
  );
}

test("a declaration the API server refuses is reported as KNV2009, never as a fight, however often others change the object", async (t) => {
  const namespace = await testNamespace(t, "refused");
  const name = `refused-${suffix()}`;
  const repo = await TestRepo.create(t);
  await repo.write("config/frozen.yaml", configMap(namespace, "frozen", { a: "1" }, true));
  await repo.write("config/barrier.yaml", configMap(namespace, "barrier", { b: "1" }));
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, await repo.commit("an immutable ConfigMap"));

  // Its data cannot change: every write of the new declaration is refused (422).
  await repo.write("config/frozen.yaml", configMap(namespace, "frozen", { a: "2" }, true));
  const refused = await repo.commit("change the immutable data");
  assert.deepEqual(codes(await syncErrorsAt(name, refused)), ["2009"]);

  // Someone labels it, more times than the fight threshold: each change is a drift driftless cannot fix.
  for (let round = 0; round < 8; round++) {
    const live = await coreApi().readNamespacedConfigMap({ namespace, name: "frozen" });
    live.metadata = { ...live.metadata, labels: { ...live.metadata?.labels, round: String(round) } };
    await coreApi().replaceNamespacedConfigMap({ namespace, name: "frozen", body: live });
  }
  await configMapBarrier(namespace);
  // A pass after them reports what is wrong: still the refusal, and no fight.
  await repo.write("config/later.yaml", configMap(namespace, "later", { c: "1" }));
  const later = await repo.commit("another object");
  const errors = await syncErrorsAt(name, later);
  assert.deepEqual(codes(errors), ["2009"], JSON.stringify(errors));
  assert.match(String(errors[0]?.["errorMessage"]), /frozen/);
});

test("after an object moves to another apiVersion, status written by its controller is no drift and no fight", async (t) => {
  const namespace = await testNamespace(t, "moved");
  const name = `moved-${suffix()}`;
  const repo = await TestRepo.create(t);
  const target = { apiVersion: "apps/v1", kind: "Deployment", name: "web" };
  const atV1 = (hpa: string): string =>
    JSON.stringify({
      apiVersion: "autoscaling/v1",
      kind: "HorizontalPodAutoscaler",
      metadata: { name: hpa, namespace },
      spec: { scaleTargetRef: target, minReplicas: 1, maxReplicas: 5, targetCPUUtilizationPercentage: 80 },
    });
  await repo.write("config/web.yaml", atV1("web"));
  // Stays at autoscaling/v1: its re-creation orders the events of that version's watch.
  await repo.write("config/barrier.yaml", atV1("barrier"));
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, await repo.commit("HPAs at autoscaling/v1"));
  await repo.write(
    "config/web.yaml",
    JSON.stringify({
      apiVersion: "autoscaling/v2",
      kind: "HorizontalPodAutoscaler",
      metadata: { name: "web", namespace },
      spec: {
        scaleTargetRef: target,
        minReplicas: 1,
        maxReplicas: 5,
        metrics: [
          { type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } } },
        ],
      },
    }),
  );
  await rootSynced(name, await repo.commit("one HPA at autoscaling/v2"));

  // What the HPA controller does on a real cluster: writes its status, again and again.
  const autoscaling = kubeConfig("admin").makeApiClient(AutoscalingV2Api);
  for (let round = 1; round <= 8; round++) {
    const live = await autoscaling.readNamespacedHorizontalPodAutoscalerStatus({ namespace, name: "web" });
    live.status = { currentReplicas: round, desiredReplicas: round, currentMetrics: [] };
    await autoscaling.replaceNamespacedHorizontalPodAutoscalerStatus({ namespace, name: "web", body: live });
  }
  await remediatorCaughtUp(
    async () => (await autoscaling.readNamespacedHorizontalPodAutoscaler({ namespace, name: "barrier" })).metadata?.uid,
    () => autoscaling.deleteNamespacedHorizontalPodAutoscaler({ namespace, name: "barrier" }),
  );
  await repo.write("config/later.yaml", configMap(namespace, "later", { c: "1" }));
  const later = await repo.commit("another object");
  // What the pass on it reports (a fight would pause the object for a minute and fail the pass).
  const sync = await eventually(
    async () => {
      const reported = (await rootSyncStatus(name))["sync"] as JsonObject | undefined;
      return reported?.["commit"] === later ? reported : undefined;
    },
    { what: `RootSync ${name} to report the pass on ${later.slice(0, 7)}` },
  );
  assert.deepEqual(sync["errors"] ?? [], []);
});

// Config Sync's e2e TestSurfaceFightError: resource_fights_total grows while another writer keeps at it.
test("resource_fights_total counts a fight and each change another writer makes while correction is paused, as Config Sync's remediator counts each correction during a fight", async (t) => {
  const namespace = await testNamespace(t, "fights");
  const name = `fights-${suffix()}`;
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/fought.yaml",
    JSON.stringify({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "fought", namespace, annotations: { foo: "bar" } },
      data: { a: "1" },
    }),
  );
  await createRootSync(name, repo);
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { metricsPort: 0 },
  );
  await rootSynced(name, await repo.commit("a ConfigMap"));
  const url = `${reconciler.metricsUrl}/metrics`;
  const annotate = (value: string): Promise<unknown> =>
    coreApi().patchNamespacedConfigMap({
      namespace,
      name: "fought",
      body: [{ op: "replace", path: "/metadata/annotations/foo", value }],
    });
  const foo = async (): Promise<string | undefined> =>
    (await coreApi().readNamespacedConfigMap({ namespace, name: "fought" })).metadata?.annotations?.["foo"];

  // Six corrections within the minute: the sixth makes it a fight (more than 5 writes), and correction pauses.
  for (let round = 1; round <= 6; round++) {
    await annotate(`baz-${round}`);
    await eventually(async () => (await foo()) === "bar", { timeoutMs: 30_000, what: `correction ${round}` });
  }
  // The other writer goes on: left as it is, each change counted.
  for (let round = 7; round <= 10; round++) await annotate(`baz-${round}`);
  const fights = await eventually(
    async () => {
      const value = valueOf(await scrape(url), "config_sync_resource_fights_total") ?? 0;
      return value >= 5 ? value : undefined;
    },
    { timeoutMs: 30_000, what: "resource_fights_total at 5 (the fight, then 4 changes during its pause)" },
  );
  assert.ok(fights >= 5);
  assert.equal(await foo(), "baz-10", "not corrected while paused");
});
