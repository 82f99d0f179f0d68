/**
 * The RootSync CRD not installed (Config Sync's e2e TestReconcilerManagerRootSyncCRDMissing): the manager
 * starts ready and serves RepoSyncs, and takes RootSyncs once the CRD is back. Removing a CRD is cluster-wide,
 * so this file has a control plane of its own.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject } from "@driftless/kube";
import { usePrivateControlPlane } from "../../support/private-control-plane.ts";
import { grantRepoSyncReconciler } from "../../support/rbac.ts";
import { eventually, suffix, TestRepo } from "../../support/index.ts";
import {
  admin,
  configMap,
  createNamespace,
  createSync,
  getObject,
  Mapping,
  repoSyncObject,
  rootSyncObject,
  startManager,
  synced,
  systemNamespace,
} from "./helpers.ts";

await usePrivateControlPlane();

const Crd = Mapping.CustomResourceDefinition;
const rootSyncCrd = "rootsyncs.configsync.gke.io";

async function readyz(port: number): Promise<number> {
  return (await fetch(`http://127.0.0.1:${port}/readyz`)).status;
}

test("without the RootSync CRD the manager is ready and serves RepoSyncs, also after a restart, and takes RootSyncs once the CRD is back", async (t) => {
  const client = await admin();
  const crd = await client.get(Crd, undefined, rootSyncCrd);
  assert.ok(crd !== undefined);
  await client.delete(Crd, undefined, rootSyncCrd);
  await eventually(async () => (await client.get(Crd, undefined, rootSyncCrd)) === undefined, {
    what: "the RootSync CRD removed",
  });

  const first = await startManager(t);
  await eventually(async () => (await readyz(first.metricsPort)) === 200, { what: "the manager ready" });
  const namespace = await createNamespace(t, "nocrd");
  await grantRepoSyncReconciler(namespace);
  const repo = await TestRepo.create(t);
  await repo.write("one.yaml", configMap("one", namespace, { a: "1" }));
  await createSync(t, repoSyncObject(namespace, "repo-sync", first.scope, { repo: repo.url, branch: repo.branch }));
  await synced("RepoSync", namespace, "repo-sync", await repo.commit("one"));

  // A manager started while the CRD is missing: ready, and it takes the RepoSync (its reconciler is its child).
  await first.stop();
  const second = await startManager(t, { scope: first.scope });
  await eventually(async () => (await readyz(second.metricsPort)) === 200, { what: "the restarted manager ready" });
  await repo.write("two.yaml", configMap("two", namespace, { a: "2" }));
  await synced("RepoSync", namespace, "repo-sync", await repo.commit("two"));

  const { metadata, ...definition } = crd;
  await client.create(Crd, { ...definition, metadata: { name: metadata.name, labels: metadata.labels } } as KubeObject);
  const rootRepo = await TestRepo.create(t);
  await rootRepo.write("root.yaml", configMap("root", namespace, { a: "root" }));
  const rootCommit = await rootRepo.commit("the RootSync's");
  const name = `back-${suffix()}`;
  await eventually(
    async () => {
      await createSync(t, rootSyncObject(name, second.scope, { repo: rootRepo.url, branch: rootRepo.branch }));
      return true;
    },
    { what: "a RootSync created once the CRD serves" },
  );
  await synced("RootSync", systemNamespace, name, rootCommit);
  assert.ok(await getObject(Mapping.ConfigMap, namespace, "root"));
});
