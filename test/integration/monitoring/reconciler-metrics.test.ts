/**
 * What a reconciler's /metrics carries as Config Sync's does, on the real control plane, Redis and git:
 * a sample for every metric after a sync and an error alone (no drift corrected), the sync's
 * metadata.generation on every series, and the ResourceGroup's readiness in pipeline_error_observed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  coreApi,
  createRepoSync,
  createRootSync,
  customApi,
  eventually,
  rootSynced,
  rootSyncNamespace,
  rootSyncs,
  startReconciler,
  suffix,
  repoSyncSyncedTo,
  testNamespace,
  TestRepo,
  updateRootSyncSpec,
  type JsonObject,
} from "../../support/index.ts";
import { configMap } from "../manager/helpers.ts";
import { createStatusWidgetCrd, deleteRootSyncAfter, setWidgetConditions } from "../../support/status-widgets.ts";
import { denyByPolicy } from "../../support/admission-policy.ts";
import { fullScrape, scrape, valueOf } from "./scrape.ts";

async function rootSyncGeneration(name: string): Promise<number> {
  const sync = (await customApi().getNamespacedCustomObject({ ...rootSyncs, name })) as JsonObject;
  return (sync["metadata"] as { generation: number }).generation;
}

test("every metric a reconciler registers has a sample after a sync and an error, with no drift ever corrected", async (t) => {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", configMap("a", namespace, { color: "blue" }));
  await repo.commit("one config map");
  await createRepoSync(namespace, repo, { git: { period: "2s" } });
  const reconciler = await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" }, { metricsPort: 0 });
  assert.ok(reconciler.metricsUrl !== undefined);
  const url = `${reconciler.metricsUrl}/metrics`;
  await eventually(async () => valueOf(await scrape(url), "config_sync_last_sync_timestamp", { status: "success" }), {
    timeoutMs: 30_000,
    what: "the first commit synced",
  });
  await repo.write("config/bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: [unclosed\n");
  await repo.commit("a file that does not parse");
  await eventually(
    async () => valueOf(await scrape(url), "config_sync_pipeline_error_observed", { component: "source" }) === 1,
    { timeoutMs: 30_000, what: "the source error observed" },
  );
  const scraped = await fullScrape(url, "the reconciler");
  assert.equal(valueOf(scraped, "config_sync_remediate_duration_seconds_count", { status: "success" }), 0);
});

test("a reconciler's series carry configsync_sync_generation, the sync's metadata.generation, and follow a spec change", async (t) => {
  const name = `gen-${suffix()}`;
  deleteRootSyncAfter(t, name);
  const namespace = await testNamespace(t, "gen");
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", configMap("a", namespace, { color: "blue" }));
  const commit = await repo.commit("one config map");
  await createRootSync(name, repo);
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { metricsPort: 0 },
  );
  const url = `${reconciler.metricsUrl}/metrics`;
  await rootSynced(name, commit);
  /** The generations the scrape's samples carry: one, and on every sample, once it has settled. */
  const generations = async (): Promise<string[]> => {
    const { samples } = await scrape(url);
    return [...new Set(samples.map((line) => /configsync_sync_generation="([^"]*)"/.exec(line)?.[1] ?? "none"))];
  };
  const first = String(await rootSyncGeneration(name));
  assert.deepEqual(await generations(), [first]);

  await updateRootSyncSpec(name, (spec) => ({ ...spec, git: { ...(spec["git"] as JsonObject), period: "17s" } }));
  const second = String(await rootSyncGeneration(name));
  assert.notEqual(second, first);
  await eventually(async () => (await generations()).join() === second, {
    timeoutMs: 30_000,
    what: `every series labelled configsync_sync_generation="${second}"`,
  });
  const after = await scrape(url);
  assert.ok(
    (valueOf(after, "config_sync_reconcile_duration_seconds_count", { configsync_sync_generation: second }) ?? 0) >= 1,
  );
});

test('pipeline_error_observed{component="readiness"} is 1 while an object of the ResourceGroup is Failed and 0 once it is not, named by the reconciler as Config Sync\'s ResourceGroup controller names it', async (t) => {
  const group = await createStatusWidgetCrd(t, "ready");
  const namespace = await testNamespace(t, "ready");
  const name = `ready-${suffix()}`;
  deleteRootSyncAfter(t, name);
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/widget.yaml",
    JSON.stringify({ apiVersion: `${group}/v1`, kind: "Widget", metadata: { name: "w1", namespace }, spec: {} }),
  );
  const commit = await repo.commit("a widget");
  await createRootSync(name, repo);
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { metricsPort: 0 },
  );
  const url = `${reconciler.metricsUrl}/metrics`;
  await rootSynced(name, commit);
  const readiness = { name: `root-reconciler-${name}`, reconciler: "root-sync", component: "readiness" };
  const readinessIs = (value: number, what: string): Promise<true> =>
    eventually(async () => valueOf(await scrape(url), "config_sync_pipeline_error_observed", readiness) === value, {
      timeoutMs: 30_000,
      what,
    });

  await readinessIs(0, "readiness 0 while the Widget is Current");
  // kstatus: a Stalled condition is Failed.
  await setWidgetConditions(group, namespace, [{ type: "Stalled", status: "True", reason: "Broken" }]);
  await readinessIs(1, "readiness 1 once the Widget is Failed");
  await setWidgetConditions(group, namespace, [{ type: "Ready", status: "True", reason: "Ready" }]);
  await readinessIs(0, "readiness 0 once the Widget is Current again");
});

test('a drift correction the API server refuses counts as apply_operations_total{controller="remediator",operation="update",status="error"}, as Config Sync\'s remediator records every write it sends', async (t) => {
  const namespace = await testNamespace(t, "refused");
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", configMap("a", namespace, { color: "blue" }));
  const commit = await repo.commit("one config map");
  await createRepoSync(namespace, repo, { git: { period: "2s" } });
  const reconciler = await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" }, { metricsPort: 0 });
  const url = `${reconciler.metricsUrl}/metrics`;
  await repoSyncSyncedTo(namespace, commit);

  // A policy engine that refuses to turn a hand-edited (labelled) map back to blue: the correction's write.
  const denial = `policy refused-${namespace}: no going back to blue`;
  await denyByPolicy(t, `refused-${namespace}`, {
    rule: { apiGroups: [""], apiVersions: ["v1"], operations: ["UPDATE"], resources: ["configmaps"] },
    when: `object.metadata.namespace == '${namespace}' && object.data.color == 'blue' && has(oldObject.metadata.labels) && 'drifted' in oldObject.metadata.labels`,
    message: denial,
  });
  const drifted = { metadata: { labels: { drifted: "yes" } }, data: { color: "green" } };
  await coreApi().createNamespacedConfigMap({
    namespace,
    body: { metadata: { name: "probe", ...drifted.metadata }, data: drifted.data },
  });
  await eventually(
    async () => {
      try {
        await coreApi().patchNamespacedConfigMap({
          name: "probe",
          namespace,
          dryRun: "All",
          body: [{ op: "replace", path: "/data/color", value: "blue" }],
        });
        return false;
      } catch (error) {
        return String(error).includes(denial);
      }
    },
    { what: "the admission policy to be in force" },
  );

  await coreApi().patchNamespacedConfigMap({
    name: "a",
    namespace,
    body: [
      { op: "add", path: "/metadata/labels", value: drifted.metadata.labels },
      { op: "replace", path: "/data/color", value: "green" },
    ],
  });
  const refused = { controller: "remediator", operation: "update", status: "error" };
  await eventually(async () => (valueOf(await scrape(url), "config_sync_apply_operations_total", refused) ?? 0) >= 1, {
    timeoutMs: 30_000,
    what: "the refused correction counted",
  });
  const scraped = await scrape(url);
  assert.ok((valueOf(scraped, "config_sync_remediate_duration_seconds_count", { status: "error" }) ?? 0) >= 1);
});
