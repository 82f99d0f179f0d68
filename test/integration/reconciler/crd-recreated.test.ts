/**
 * Custom resource types coming and going under a running reconciler: a CRD deleted by someone and created
 * again, changed in place, or declared by the sync itself.
 */
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import type { KubeClient, ResourceMapping } from "@driftless/kube";
import { createLogger, type Reconciler } from "@driftless/sync";
import {
  createRootSync,
  customApi,
  eventually,
  rootSynced,
  rootSyncNamespace,
  rootSyncs,
  rootSyncStatus,
  startReconciler,
  suffix,
  testNamespace,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";
import { adminClient, crdEstablished, crds } from "../kube/support.ts";
import { anvilCrd, anvils } from "./anvil-crd.ts";

async function gone(client: KubeClient, name: string): Promise<void> {
  await eventually(async () => (await client.get(crds, undefined, name)) === undefined || undefined, {
    what: `${name} gone`,
  });
}

/** A sync of one Anvil, its CRD declared in Git or made by someone (of `scope`: a Cluster one is KNV1052). */
async function setup(t: TestContext, declareCrd: boolean, scope = "Namespaced") {
  const namespace = await testNamespace(t, "crdback");
  const group = `crdback${suffix()}.acme.com`;
  const name = `crdback-${suffix()}`;
  const crdName = `anvils.${group}`;
  const client = await adminClient(t);
  const lines: string[] = [];
  t.after(() => {
    if (process.env["DRIFTLESS_TEST_LOGS"] === "1") process.stderr.write(lines.join(""));
  });
  t.after(async () => {
    await customApi()
      .deleteNamespacedCustomObject({ ...rootSyncs, name })
      .catch(() => undefined);
    await client.delete(crds, undefined, crdName).catch(() => undefined);
  });
  const repo = await TestRepo.create(t);
  if (declareCrd) await repo.write("config/crd.yaml", JSON.stringify(anvilCrd(group)));
  else {
    await client.create(crds, anvilCrd(group, undefined, scope));
    await crdEstablished(client, crdName);
  }
  const anvil = { apiVersion: `${group}/v1`, kind: "Anvil", metadata: { name: "heavy", namespace }, spec: { lbs: 10 } };
  await repo.write("config/anvil.yaml", JSON.stringify(anvil));
  const first = await repo.commit("an Anvil");
  await createRootSync(name, repo);
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    {
      resyncPeriodMs: 600_000,
      log: createLogger({ test: t.name }, { level: "debug", write: (line) => void lines.push(line) }),
    },
  );
  if (scope === "Namespaced") await rootSynced(name, first);
  return { namespace, group, name, crdName, client, repo, reconciler, lines, first };
}

/** Waits until the sync's commit is applied with no error on status.source or status.sync. */
async function clean(name: string, commit: string): Promise<void> {
  await eventually(
    async () => {
      const status = await rootSyncStatus(name);
      const source = (status["source"] ?? {}) as JsonObject;
      const sync = (status["sync"] ?? {}) as JsonObject;
      const none = (part: JsonObject): boolean => ((part["errors"] ?? []) as JsonObject[]).length === 0;
      return (sync["commit"] === commit && none(source) && none(sync)) || undefined;
    },
    { timeoutMs: 60_000, what: `the sync clean at ${commit.slice(0, 7)}` },
  );
}

/** A hand edit of the Anvil is corrected: its type is watched (a poll of a synced commit applies nothing). */
async function editCorrected(client: KubeClient, group: string, namespace: string): Promise<void> {
  await client.patch(anvils(group), namespace, "heavy", { spec: { lbs: 99 } }, "merge");
  await eventually(
    async () =>
      ((await client.get(anvils(group), namespace, "heavy"))?.["spec"] as JsonObject)["lbs"] === 10 || undefined,
    { timeoutMs: 30_000, what: "the hand edit corrected" },
  );
}

const watchedResources = (reconciler: Reconciler): string[] =>
  (reconciler as unknown as { parts: { live: { watchedTypes(): ResourceMapping[] } } }).parts.live
    .watchedTypes()
    .map((m) => `${m.resource}.${m.group}`);

test("a CRD someone deletes and creates again, three times, under a declared custom resource: it is applied and watched again each time with no new commit, and no watch outlives its declaration", async (t) => {
  const { namespace, group, crdName, client, name, first, repo, reconciler, lines } = await setup(t, false);
  for (let round = 0; round < 3; round++) {
    await client.delete(crds, undefined, crdName);
    await gone(client, crdName);
    await client.create(crds, anvilCrd(group));
    await crdEstablished(client, crdName);
    await eventually(async () => (await client.get(anvils(group), namespace, "heavy")) ?? undefined, {
      timeoutMs: 60_000,
      what: `the Anvil applied again (round ${round + 1})`,
    });
    await clean(name, first);
    await editCorrected(client, group, namespace);
  }
  const warnings = lines.filter((line) => line.includes("list or watch failed") && line.includes(group));
  assert.ok(warnings.length <= 3, `a 404 retried: ${warnings.length} warnings`);

  await repo.remove("config/anvil.yaml");
  await repo.write(
    "config/keep.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "keep", namespace } }),
  );
  const without = await repo.commit("the Anvil leaves");
  await clean(name, without);
  assert.ok(!watchedResources(reconciler).includes(`anvils.${group}`), "the Anvils' watch outlived the declaration");
});

test("a CRD the sync declares, deleted by someone, is created again and then its custom resource, with no new commit", async (t) => {
  const { namespace, group, crdName, client, name, first } = await setup(t, true);
  const uid = (await client.get(crds, undefined, crdName))?.metadata.uid;
  await client.delete(crds, undefined, crdName);
  await eventually(
    async () => ((await client.get(crds, undefined, crdName))?.metadata.uid ?? uid) !== uid || undefined,
    {
      timeoutMs: 60_000,
      what: "the CRD created again",
    },
  );
  await eventually(
    async () => (await client.get(anvils(group), namespace, "heavy").catch(() => undefined)) ?? undefined,
    {
      timeoutMs: 60_000,
      what: "the Anvil applied again",
    },
  );
  await clean(name, first);
  await editCorrected(client, group, namespace);
});

test("a CRD whose declared version someone stops serving: KNV1021 is reported without a new commit, and the custom resource syncs again once it is served", async (t) => {
  const { namespace, group, crdName, client, name, first } = await setup(t, false);
  const schema = { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } };
  const serve = async (v1: boolean): Promise<void> => {
    const live = await client.get(crds, undefined, crdName);
    assert.ok(live);
    const versions = [
      { name: "v1", served: v1, storage: v1, schema },
      { name: "v2", served: true, storage: !v1, schema },
    ];
    await client.update(crds, live, { ...live, spec: { ...(live["spec"] as JsonObject), versions } });
  };
  await serve(false);
  // No object is deleted: only the watch's 404 says the declared version went (resync is 10 minutes away).
  await eventually(
    async () => {
      const source = ((await rootSyncStatus(name))["source"] ?? {}) as JsonObject;
      const errors = (source["errors"] ?? []) as JsonObject[];
      return (source["commit"] === first && errors.some((e) => e["code"] === "1021")) || undefined;
    },
    { timeoutMs: 30_000, what: "KNV1021 on status.source" },
  );

  await serve(true);
  await clean(name, first);
  await editCorrected(client, group, namespace);
});

async function recreateCrd(client: KubeClient, group: string, scope: string): Promise<void> {
  await client.delete(crds, undefined, `anvils.${group}`);
  await gone(client, `anvils.${group}`);
  await client.create(crds, anvilCrd(group, undefined, scope));
  await crdEstablished(client, `anvils.${group}`);
}

async function knv1052(name: string): Promise<void> {
  await eventually(
    async () => {
      const source = ((await rootSyncStatus(name))["source"] ?? {}) as JsonObject;
      return ((source["errors"] ?? []) as JsonObject[]).some((e) => e["code"] === "1052") || undefined;
    },
    { timeoutMs: 30_000, what: "KNV1052 on status.source" },
  );
}

test("a CRD someone creates again cluster-scoped under a declared namespaced custom resource: KNV1052 is reported, and it syncs again once the CRD is namespaced again", async (t) => {
  const { namespace, group, client, name, first } = await setup(t, false);
  await recreateCrd(client, group, "Cluster");
  await knv1052(name);
  await recreateCrd(client, group, "Namespaced");
  await clean(name, first);
  await editCorrected(client, group, namespace);
});

test("a namespaced custom resource whose CRD is cluster-scoped from the start (no CRD watch yet): KNV1052, then it syncs once someone creates the CRD again namespaced", async (t) => {
  const { namespace, group, client, name, first } = await setup(t, false, "Cluster");
  await knv1052(name);
  await recreateCrd(client, group, "Namespaced");
  await clean(name, first);
  await editCorrected(client, group, namespace);
});

test("a CRD someone deletes for good, then its custom resources leave Git: neither their watch nor the CRD watch stays open", async (t) => {
  const { namespace, crdName, client, name, repo, reconciler } = await setup(t, false);
  await client.delete(crds, undefined, crdName);
  await gone(client, crdName);
  await repo.remove("config/anvil.yaml");
  await repo.write(
    "config/keep.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "keep", namespace } }),
  );
  const without = await repo.commit("the Anvil leaves");
  await clean(name, without);
  const parts = (reconciler as unknown as { parts: { crdWatch: { readonly watching: boolean } | undefined } }).parts;
  assert.deepEqual(watchedResources(reconciler), ["configmaps."]);
  assert.equal(parts.crdWatch?.watching, false, "the CRD watch outlived the last custom resource type");
});
