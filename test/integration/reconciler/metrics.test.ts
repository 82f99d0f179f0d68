import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject } from "@driftless/kube";
import {
  coreApi,
  createRepoSync,
  createRootSync,
  customApi,
  eventually,
  type JsonObject,
  repoSyncStatus,
  rootSynced,
  rootSyncNamespace,
  rootSyncs,
  rootSyncStatus,
  startReconciler,
  suffix,
  testNamespace,
  TestRepo,
} from "../../support/index.ts";
import { adminClient, crds } from "../kube/support.ts";
import { samplesOf, type Scrape, scrape, unrecorded, valueOf } from "../monitoring/scrape.ts";

/** Registered config_sync_ metrics with no sample at all: registered, never recorded. */
function unrecordedConfigSync(s: Scrape): string[] {
  return unrecorded(s).filter((name) => name.startsWith("config_sync_"));
}

function configMap(name: string, namespace: string, data: Record<string, string>): string {
  return JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data });
}

test("every registered config_sync_ metric has a sample after a sync, a drift correction and a source error", async (t) => {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", configMap("a", namespace, { color: "blue" }));
  await repo.write("config/b.yaml", configMap("b", namespace, { size: "1" }));
  const first = await repo.commit("two config maps");
  await createRepoSync(namespace, repo, { git: { period: "15s" } });
  const reconciler = await startReconciler(t, { kind: "RepoSync", namespace, name: "repo-sync" }, { metricsPort: 0 });
  const url = reconciler.metricsUrl;
  assert.ok(url !== undefined);
  await eventually(async () => (await repoSyncStatus(namespace))["lastSyncedCommit"] === first, {
    what: "the first commit synced",
  });

  // A drift correction, so that the remediator's metrics have something to say too.
  const live = (await coreApi().readNamespacedConfigMap({ namespace, name: "a" })) as unknown as JsonObject;
  await coreApi().replaceNamespacedConfigMap({
    namespace,
    name: "a",
    body: { ...live, data: { color: "red" } } as never,
  });
  const synced = await eventually(
    async () => {
      const s = await scrape(`${url}/metrics`);
      const cm = await coreApi().readNamespacedConfigMap({ namespace, name: "a" });
      // The first pass records its metrics after its status write and Event: its last_sync sample says it did.
      const passRecorded = valueOf(s, "config_sync_last_sync_timestamp", { commit: first }) !== undefined;
      return cm.data?.["color"] === "blue" &&
        samplesOf(s, "config_sync_remediate_duration_seconds").length > 0 &&
        passRecorded
        ? s
        : undefined;
    },
    { timeoutMs: 15_000, what: "the drifted config map corrected" },
  );
  assert.deepEqual(unrecordedConfigSync(synced), [], "registered but without a sample after a sync");
  assert.ok(synced.types.size > 0);
  assert.equal(valueOf(synced, "config_sync_ready_resource_count", { resourcegroup: `${namespace}/repo-sync` }), 2);
  assert.equal(valueOf(synced, "config_sync_pipeline_error_observed", { component: "source" }), 0);
  assert.equal(valueOf(synced, "config_sync_pipeline_error_observed", { component: "sync" }), 0);
  assert.ok((valueOf(synced, "config_sync_api_duration_seconds_count", { operation: "get" }) ?? 0) > 0);
  assert.ok(
    (valueOf(synced, "config_sync_parser_duration_seconds_count", { source: "parse", status: "success" }) ?? 0) > 0,
  );

  // A commit that does not parse: the source stage fails.
  await repo.write("config/bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: [unclosed\n");
  const broken = await repo.commit("a file that does not parse");
  const failed = await eventually(
    async () => {
      const s = await scrape(`${url}/metrics`);
      return valueOf(s, "config_sync_pipeline_error_observed", { component: "source" }) === 1 ? s : undefined;
    },
    { timeoutMs: 30_000, what: `the source error of ${broken.slice(0, 7)} observed` },
  );
  assert.deepEqual(unrecordedConfigSync(failed), [], "registered but without a sample after an error");
  assert.ok(
    (valueOf(failed, "config_sync_parser_duration_seconds_count", { source: "parse", status: "error" }) ?? 0) > 0,
  );
  assert.equal(valueOf(failed, "config_sync_internal_errors_total", { source: "parser" }), 0);
});

function anvilCrd(group: string): KubeObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `anvils.${group}` },
    spec: {
      group,
      names: { kind: "Anvil", plural: "anvils", singular: "anvil" },
      scope: "Namespaced",
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        },
      ],
    },
  };
}

async function createEstablished(client: Awaited<ReturnType<typeof adminClient>>, crd: KubeObject): Promise<void> {
  await client.create(crds, crd);
  await eventually(
    async () => {
      const live = await client.get(crds, undefined, crd.metadata.name);
      const conditions = ((live?.["status"] as JsonObject | undefined)?.["conditions"] ?? []) as JsonObject[];
      return conditions.some((c) => c["type"] === "Established" && c["status"] === "True") || undefined;
    },
    { what: `${crd.metadata.name} established` },
  );
}

/**
 * A RootSync synced on a commit declaring an Anvil (its CRD created outside the source) and whatever `more`
 * writes, read by its metrics.
 */
async function syncedAnvil(t: TestContext, more: (repo: TestRepo, namespace: string) => Promise<void>) {
  const namespace = await testNamespace(t, "crdgone");
  const group = `crdgone${suffix()}.acme.com`;
  const name = `crdgone-${suffix()}`;
  const client = await adminClient(t);
  t.after(async () => {
    await customApi()
      .deleteNamespacedCustomObject({ ...rootSyncs, name })
      .catch(() => undefined);
    await client.delete(crds, undefined, `anvils.${group}`).catch(() => undefined);
  });
  await createEstablished(client, anvilCrd(group));
  const repo = await TestRepo.create(t);
  const anvil = { apiVersion: `${group}/v1`, kind: "Anvil", metadata: { name: "heavy", namespace }, spec: { lbs: 10 } };
  await repo.write("config/anvil.yaml", JSON.stringify(anvil));
  await more(repo, namespace);
  const first = await repo.commit("an Anvil");
  await createRootSync(name, repo);
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { metricsPort: 0 },
  );
  const url = reconciler.metricsUrl;
  assert.ok(url !== undefined);
  await rootSynced(name, first);
  return {
    namespace,
    name,
    repo,
    anvil,
    first,
    conflictsOn: async (commit: string): Promise<number | undefined> =>
      valueOf(await scrape(`${url}/metrics`), "config_sync_resource_conflicts_total", { commit }),
    deleteCrd: () => client.delete(crds, undefined, `anvils.${group}`),
  };
}

// Config Sync's e2e TestCRDDeleteBeforeRemoveCustomResourceV1: the conflict is counted on the synced commit.
test("a CRD someone deletes under declared custom resources counts a resource conflict; removing them syncs clean", async (t) => {
  // Something stays declared once the Anvil leaves: an empty source would be refused (KNV2006).
  const { name, repo, anvil, first, conflictsOn, deleteCrd } = await syncedAnvil(t, (repo, namespace) =>
    repo.write("config/keep.yaml", configMap("keep", namespace, { k: "v" })),
  );
  // The pass adds the commit's series (0 included) after its status write and Event: wait for it, then read it.
  const counted = await eventually(async () => (await conflictsOn(first)) ?? false, {
    what: "the synced commit's resource_conflicts_total series",
  });
  assert.equal(counted, 0);

  await deleteCrd();
  await eventually(async () => ((await conflictsOn(first)) ?? 0) >= 1 || undefined, {
    timeoutMs: 30_000,
    what: "a resource conflict counted on the synced commit",
  });

  await repo.write("config/anvil.yaml", JSON.stringify({ ...anvil, spec: { lbs: 100 } }));
  const changed = await repo.commit("the Anvil changed");
  await eventually(
    async () => {
      const source = ((await rootSyncStatus(name))["source"] ?? {}) as JsonObject;
      const errors = (source["errors"] ?? []) as JsonObject[];
      return source["commit"] === changed && errors.some((e) => e["code"] === "1021") ? true : undefined;
    },
    { timeoutMs: 60_000, what: "KNV1021 on status.source" },
  );
  await repo.remove("config/anvil.yaml");
  const removed = await repo.commit("the Anvil removed");
  const status = await rootSynced(name, removed);
  assert.deepEqual((status["source"] as JsonObject)["errors"] ?? [], []);
  assert.deepEqual((status["sync"] as JsonObject)["errors"] ?? [], []);
});

// Config Sync's watchers carry the commit of the last declaration, applied or not: a conflict they see after a
// commit failed to apply counts on that commit, not on none.
test("a CRD deleted after a commit failed to apply counts the resource conflict on that commit", async (t) => {
  const { namespace, name, repo, conflictsOn, deleteCrd } = await syncedAnvil(t, async () => undefined);

  // The API server refuses the Service (no such type): the commit is declared but never synced.
  const service = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "refused", namespace },
    spec: { type: "NoSuchType", ports: [{ port: 80 }] },
  };
  await repo.write("config/service.yaml", JSON.stringify(service));
  const refused = await repo.commit("a Service the API server refuses");
  await eventually(
    async () => {
      const sync = ((await rootSyncStatus(name))["sync"] ?? {}) as JsonObject;
      const errors = (sync["errors"] ?? []) as JsonObject[];
      return sync["commit"] === refused && errors.some((e) => e["code"] === "2009") ? true : undefined;
    },
    { timeoutMs: 60_000, what: "the refused Service's KNV2009 on status.sync" },
  );

  await deleteCrd();
  await eventually(async () => ((await conflictsOn(refused)) ?? 0) >= 1 || undefined, {
    timeoutMs: 30_000,
    what: "a resource conflict counted on the commit that failed to apply",
  });
});
