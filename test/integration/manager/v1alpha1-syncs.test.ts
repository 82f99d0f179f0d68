/**
 * Config Sync's TestMultiSyncs_Unstructured_MixedControl declares RootSyncs and RepoSyncs at
 * configsync.gke.io/v1alpha1 in a RootSync's source: they sync as v1beta1 ones do, and are not rewritten.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { reconcilerName } from "@driftless/api";
import { suffix, TestRepo } from "../../support/index.ts";
import {
  admin,
  configMap,
  createSync,
  getObject,
  getSync,
  Mapping,
  repoSyncObject,
  rootSyncObject,
  startManager,
  synced,
  systemNamespace,
} from "./helpers.ts";

test("a RootSync and a RepoSync declared at v1alpha1 in a RootSync's source sync, managed by it and never rewritten", async (t) => {
  const manager = await startManager(t);
  const id = suffix();
  const namespace = `alpha-${id}`;
  const repo = await TestRepo.create(t);
  const git = (dir: string) => ({ repo: repo.url, branch: repo.branch, dir });
  const root = `root-${id}`;
  const child = `child-${id}`;
  const v1alpha1 = <T extends { apiVersion: string }>(object: T): T => ({
    ...object,
    apiVersion: "configsync.gke.io/v1alpha1",
  });
  await repo.write(
    "root/ns.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }),
  );
  await repo.write(
    "root/rb.yaml",
    JSON.stringify({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "syncs-repo-sync", namespace },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "edit" },
      subjects: [
        {
          kind: "ServiceAccount",
          name: reconcilerName("RepoSync", namespace, "repo-sync"),
          namespace: systemNamespace,
        },
      ],
    }),
  );
  await repo.write("root/child.yaml", JSON.stringify(v1alpha1(rootSyncObject(child, manager.scope, git("child")))));
  await repo.write(
    "root/reposync.yaml",
    JSON.stringify(v1alpha1(repoSyncObject(namespace, "repo-sync", manager.scope, git("repo")))),
  );
  await repo.write("child/cm.yaml", configMap("from-child", namespace, { from: "child" }));
  await repo.write("repo/cm.yaml", configMap("from-repo", namespace, { from: "repo" }));
  const commit = await repo.commit("syncs at v1alpha1");
  await createSync(t, rootSyncObject(root, manager.scope, git("root")));
  t.after(async () => {
    await (await admin()).delete(Mapping.Namespace, undefined, namespace).catch(() => undefined);
  });

  await synced("RootSync", systemNamespace, root, commit, 120_000);
  await synced("RootSync", systemNamespace, child, commit, 120_000);
  await synced("RepoSync", namespace, "repo-sync", commit, 120_000);
  assert.ok(await getObject(Mapping.ConfigMap, namespace, "from-child"));
  assert.ok(await getObject(Mapping.ConfigMap, namespace, "from-repo"));
  for (const sync of [
    await getSync("RootSync", systemNamespace, child),
    await getSync("RepoSync", namespace, "repo-sync"),
  ]) {
    assert.equal(sync?.metadata.annotations?.["configsync.gke.io/manager"], `:root_${root}`);
    assert.equal(sync?.metadata.generation, 1, `${sync?.kind} rewritten`);
  }
});
