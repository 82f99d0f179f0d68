/**
 * Config Sync's naming gives RepoSync `<x>-db-2/repo-sync` and RepoSync `<x>/db` the same reconciler
 * name, `ns-reconciler-<x>-db-2`. The first keeps it: the second is Stalled (KNV1061, naming the
 * first) and gets nothing, and deleting it tears down nothing of the first's.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { access } from "node:fs/promises";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { nsReconcilerName, SyncLabel } from "@driftless/api";
import { RbacName } from "@driftless/controller";
import type { ResourceMapping } from "@driftless/kube";
import { eventually, suffix, TestRepo } from "../../support/index.ts";
import { grantRepoSyncReconciler } from "../../support/rbac.ts";
import {
  admin,
  conditionOf,
  configMap,
  createSync,
  getObject,
  getSync,
  Mapping,
  reconcilerPids,
  repoSyncObject,
  startManager,
  synced,
  systemNamespace,
} from "./helpers.ts";

const SecretMapping: ResourceMapping = {
  group: "",
  version: "v1",
  kind: "Secret",
  resource: "secrets",
  namespaced: true,
  verbs: [],
};

/**
 * RepoSync `repo-sync` of namespace `<prefix>-<id>-db-2` and RepoSync `db` of namespace `<prefix>-<id>`: both
 * named `ns-reconciler-<prefix>-<id>-db-2` by Config Sync's rule. Their namespaces are created, and deleted
 * when the test ends.
 */
async function collidingSyncs(
  t: TestContext,
  prefix: string,
): Promise<{ first: { namespace: string; name: string }; second: { namespace: string; name: string } }> {
  const client = await admin();
  const base = `${prefix}-${suffix()}`;
  const first = { namespace: `${base}-db-2`, name: "repo-sync" };
  const second = { namespace: base, name: "db" };
  for (const namespace of [first.namespace, second.namespace]) {
    await client.create(Mapping.Namespace, {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: namespace, labels: { "driftless.test/run": "true" } },
    });
    t.after(async () => {
      await client.delete(Mapping.Namespace, undefined, namespace).catch(() => undefined);
    });
  }
  return { first, second };
}

test("two RepoSyncs with the same reconciler name: the second is Stalled (KNV1061) naming the first, which keeps running, also once the second is deleted", async (t) => {
  const manager = await startManager(t);
  const client = await admin();
  const { first, second } = await collidingSyncs(t, "shop");
  const reconciler = nsReconcilerName(first.namespace, first.name);
  assert.equal(nsReconcilerName(second.namespace, second.name), reconciler);
  await grantRepoSyncReconciler(first.namespace);

  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("owned", undefined, { v: "1" }));
  const one = await repo.commit("v1");
  await createSync(
    t,
    repoSyncObject(first.namespace, first.name, manager.scope, { repo: repo.url, branch: repo.branch }),
  );
  await synced("RepoSync", first.namespace, first.name, one);
  const pids = await reconcilerPids(manager.scope, first.name);
  assert.equal(pids.length, 1);

  await createSync(
    t,
    repoSyncObject(second.namespace, second.name, manager.scope, { repo: repo.url, branch: repo.branch }),
  );
  const stalled = await eventually(
    async () => {
      const condition = conditionOf(await getSync("RepoSync", second.namespace, second.name), "Stalled") as
        { status: string; reason?: string; message?: string; errors?: { code: string }[] } | undefined;
      return condition?.status === "True" ? condition : undefined;
    },
    { timeoutMs: 30_000, what: "the second RepoSync Stalled" },
  );
  assert.equal(stalled.errors, undefined, "Config Sync's Stalled condition lists no errors: its message is the error");
  assert.equal(
    stalled.message,
    `KNV1061: reconciler name ${reconciler} is already used by RepoSync ${first.namespace}/${first.name}\n\nFor more information, see https://g.co/cloud/acm-errors#knv1061`,
  );
  assert.deepEqual(await reconcilerPids(manager.scope, second.name), [], "the second got a reconciler");
  const serviceAccount = async (): Promise<Record<string, string> | undefined> =>
    (await getObject(Mapping.ServiceAccount, systemNamespace, reconciler))?.metadata.labels;
  assert.equal(
    (await serviceAccount())?.[SyncLabel.SyncNamespace],
    first.namespace,
    "the ServiceAccount was relabelled",
  );

  // The first keeps syncing on the same process.
  await repo.write("cm.yaml", configMap("owned", undefined, { v: "2" }));
  await synced("RepoSync", first.namespace, first.name, await repo.commit("v2"));
  assert.deepEqual(await reconcilerPids(manager.scope, first.name), pids);

  // Deleting the second tears down nothing of the first's.
  await client.delete(Mapping.RepoSync, second.namespace, second.name);
  await eventually(async () => (await getSync("RepoSync", second.namespace, second.name)) === undefined, {
    what: "the second RepoSync deleted",
  });
  assert.equal((await serviceAccount())?.[SyncLabel.SyncNamespace], first.namespace, "the ServiceAccount went");
  await access(join(manager.scope.stateDir, reconciler, "kubeconfig"));
  await repo.write("cm.yaml", configMap("owned", undefined, { v: "3" }));
  await synced("RepoSync", first.namespace, first.name, await repo.commit("v3"));
  assert.deepEqual(await reconcilerPids(manager.scope, first.name), pids, "the first's reconciler was replaced");
  // Never stalled: no Stalled condition, as Config Sync's manager only clears one that was True.
  assert.equal(conditionOf(await getSync("RepoSync", first.namespace, first.name), "Stalled"), undefined);
});

test("deployment mode: the second of two RepoSyncs with the same reconciler name rewrites nothing of the first's, and its deletion removes nothing of it", async (t) => {
  const manager = await startManager(t, { mode: "deployment" });
  const client = await admin();
  const { first, second } = await collidingSyncs(t, "dshop");
  const reconciler = nsReconcilerName(first.namespace, first.name);
  const git = { repo: "https://example.invalid/config.git", branch: "main" };
  await createSync(t, repoSyncObject(first.namespace, first.name, manager.scope, git));
  const owner = async (): Promise<(string | undefined)[]> =>
    Promise.all(
      [Mapping.Deployment, Mapping.ServiceAccount, SecretMapping].map(
        async (m) =>
          (await getObject(m, systemNamespace, m === SecretMapping ? `${reconciler}-redis` : reconciler))?.metadata
            .labels?.[SyncLabel.SyncNamespace],
      ),
    );
  await eventually(async () => (await owner()).every((ns) => ns === first.namespace), {
    what: "the first RepoSync's Deployment, ServiceAccount and Secret",
  });
  const deployment = await getObject(Mapping.Deployment, systemNamespace, reconciler);

  await createSync(t, repoSyncObject(second.namespace, second.name, manager.scope, git));
  const stalled = await eventually(
    async () => {
      const condition = conditionOf(await getSync("RepoSync", second.namespace, second.name), "Stalled");
      return condition?.status === "True" ? condition : undefined;
    },
    { timeoutMs: 30_000, what: "the second RepoSync Stalled" },
  );
  assert.equal(
    stalled.message,
    `KNV1061: reconciler name ${reconciler} is already used by RepoSync ${first.namespace}/${first.name}\n\nFor more information, see https://g.co/cloud/acm-errors#knv1061`,
  );
  const after = await getObject(Mapping.Deployment, systemNamespace, reconciler);
  assert.equal(after?.metadata.generation, deployment?.metadata.generation, "the first's Deployment was rewritten");

  await client.delete(Mapping.RepoSync, second.namespace, second.name);
  await eventually(async () => (await getSync("RepoSync", second.namespace, second.name)) === undefined, {
    what: "the second RepoSync deleted",
  });
  assert.deepEqual(await owner(), [first.namespace, first.namespace, first.namespace]);
  const crdReader = await getObject(Mapping.ClusterRoleBinding, undefined, RbacName.NsCrdReaderBinding);
  assert.ok(
    ((crdReader?.["subjects"] ?? []) as { name: string }[]).some((s) => s.name === reconciler),
    "the first's subject left a shared binding",
  );
});

test("taking over from Config Sync: the ServiceAccount its reconciler-manager made for the first is neither relabelled nor deleted by the second", async (t) => {
  const manager = await startManager(t);
  const client = await admin();
  const { first, second } = await collidingSyncs(t, "csshop");
  const reconciler = nsReconcilerName(first.namespace, first.name);
  // As Config Sync's reconciler-manager labels a reconciler's ServiceAccount (ManagedObjectLabelMap).
  const configSyncLabels = {
    "configsync.gke.io/managed-by": "reconciler-manager",
    [SyncLabel.SyncKind]: "RepoSync",
    [SyncLabel.SyncName]: first.name,
    [SyncLabel.SyncNamespace]: first.namespace,
  };
  const left = await client.create(Mapping.ServiceAccount, {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name: reconciler, namespace: systemNamespace, labels: configSyncLabels },
  });
  t.after(() => client.delete(Mapping.ServiceAccount, systemNamespace, reconciler).catch(() => undefined));

  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("owned", undefined, { v: "1" }));
  await repo.commit("v1");
  await createSync(
    t,
    repoSyncObject(second.namespace, second.name, manager.scope, { repo: repo.url, branch: repo.branch }),
  );
  const labels = async (): Promise<Record<string, string> | undefined> =>
    (await getObject(Mapping.ServiceAccount, systemNamespace, reconciler))?.metadata.labels;
  // Ends on the refusal, or on the ServiceAccount taken (relabelled) for the second.
  const stalled = await eventually(
    async () => {
      const condition = conditionOf(await getSync("RepoSync", second.namespace, second.name), "Stalled");
      if (condition?.status === "True") return { message: condition.message };
      return isDeepStrictEqual(await labels(), configSyncLabels) ? undefined : { message: undefined };
    },
    { timeoutMs: 30_000, what: "the second RepoSync Stalled, or the ServiceAccount relabelled" },
  );
  assert.deepEqual(await labels(), configSyncLabels, "Config Sync's ServiceAccount of the first was relabelled");
  assert.match(
    String(stalled?.message),
    new RegExp(`reconciler name ${reconciler} is already used by RepoSync ${first.namespace}/${first.name}`),
  );

  await client.delete(Mapping.RepoSync, second.namespace, second.name);
  await eventually(async () => (await getSync("RepoSync", second.namespace, second.name)) === undefined, {
    what: "the second RepoSync deleted",
  });
  const kept = await getObject(Mapping.ServiceAccount, systemNamespace, reconciler);
  assert.equal(kept?.metadata.uid, left.metadata.uid, "Config Sync's ServiceAccount of the first was deleted");
});
