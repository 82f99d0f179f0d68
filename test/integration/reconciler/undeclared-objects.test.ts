/**
 * Objects in a tenant's namespace that forge the root sync's ApplySet label are reported, not cached:
 * driftless_watch_undeclared_objects{type} says how many there are now, the reconciler's log warns once,
 * the watch cache keeps only what the sync declares, and deleting the objects brings the gauge back to 0.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ApplySetLabel, ManagedByValue, ManagedLabel } from "@driftless/api";
import { applySetId } from "@driftless/applier";
import { KubeClient, type ResourceMapping } from "@driftless/kube";
import { createLogger } from "@driftless/sync";
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

const forged = 300;

test("objects forging the root sync's label in a tenant namespace are counted in driftless_watch_undeclared_objects and warned about once, never cached; deleting them brings the gauge to 0", async (t) => {
  const [declaredIn, tenant] = [await testNamespace(t, "undeclared"), await testNamespace(t, "tenant")];
  const client = await KubeClient.fromKubeconfig(testEnv().kubeconfig);
  t.after(() => client.close());
  const name = `undeclared-${suffix()}`;
  const repo = await TestRepo.create(t);
  for (let i = 0; i < 3; i++)
    await repo.write(
      `config/a-${i}.yaml`,
      JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: `a-${i}`, namespace: declaredIn } }),
    );
  const commit = await repo.commit("three config maps");
  await createRootSync(name, repo);

  const lines: { level: string; msg: string; undeclared?: number; types?: Record<string, number> }[] = [];
  const log = createLogger({}, { level: "debug", write: (line) => void lines.push(JSON.parse(line) as never) });
  // Passes only when asked for, so the test says when the count is looked at.
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { log, pollPeriodMs: 3_600_000 },
  );
  await rootSynced(name, commit);
  const gauge = async (): Promise<number | undefined> => {
    const metric = await reconciler.metrics.registry.getSingleMetric("driftless_watch_undeclared_objects")?.get();
    return metric?.values.find((v) => v.labels["type"] === "ConfigMap")?.value;
  };
  /** Jobs of the sync's queue not yet finished (waiting, active or delayed). */
  const queued = async (): Promise<number> => {
    const metric = await reconciler.metrics.registry.getSingleMetric("driftless_queue_jobs")?.get();
    return (metric?.values ?? []).filter((v) => v.labels["queue"] === "sync").reduce((n, v) => n + v.value, 0);
  };
  /**
   * Runs one pass (a poll: Git is unchanged) and waits for it to end, and for the queue to be empty: a pass
   * that ended may be one that ran before the trigger, with the poll queued behind it, which would then run
   * while the test makes objects and log their count early (a line a minute at most: the test's went unsaid).
   */
  const pass = async (): Promise<void> => {
    const before = reconciler.passCount;
    await reconciler.trigger("poll");
    await eventually(() => (reconciler.passCount > before ? true : undefined), { what: "a pass" });
    await eventually(async () => ((await queued()) === 0 ? true : undefined), { what: "the sync queue empty" });
  };
  await pass();
  assert.equal(await gauge(), 0, "a watched type with nothing undeclared reads 0");

  const label = applySetId({ kind: "RootSync", namespace: rootSyncNamespace, name });
  const names = Array.from({ length: forged }, (_, i) => `forged-${i}`);
  for (let at = 0; at < forged; at += 25)
    await Promise.all(
      names.slice(at, at + 25).map((forgedName) =>
        client.create(configMaps, {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: {
            name: forgedName,
            namespace: tenant,
            labels: { [ApplySetLabel.PartOf]: label, [ManagedLabel.ManagedBy]: ManagedByValue },
          },
          data: { value: "x".repeat(1024) },
        }),
      ),
    );
  await eventually(() => (reconciler.watchCache()?.undeclared === forged ? true : undefined), {
    what: `the ${forged} forged ConfigMaps counted as undeclared`,
  });
  await pass();
  assert.equal(await gauge(), forged);
  assert.equal(reconciler.watchCache()?.objects, 3, "only the three declared ConfigMaps are cached");
  await pass();
  const warnings = lines.filter((l) => l.level === "warn" && l.undeclared !== undefined);
  assert.deepEqual(
    warnings.map((l) => [l.undeclared, l.types]),
    [[forged, { ConfigMap: forged }]],
    "one warning, with the count and the types",
  );

  await Promise.all(names.map((forgedName) => client.delete(configMaps, tenant, forgedName)));
  await eventually(() => (reconciler.watchCache()?.undeclared === 0 ? true : undefined), {
    what: "the deleted forged ConfigMaps to leave the count",
  });
  await pass();
  assert.equal(await gauge(), 0);
  assert.equal(reconciler.watchCache()?.objects, 3);
});
