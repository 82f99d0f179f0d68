/**
 * Config Sync's composition (its e2e TestComposition): a RootSync managing a RootSync managing a RepoSync
 * managing a RepoSync, all from one repository in different directories. Each layer is managed by the one
 * above; and removing the chain from Git deletes it from the top down to the last ConfigMap before the
 * RepoSyncs' RoleBindings go, because the child RootSync depends on them (depends-on), as Config Sync
 * documents for a RepoSync and its RoleBinding.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { reconcilerName } from "@driftless/api";
import type { KubeObject, ResourceMapping } from "@driftless/kube";
import { eventually, suffix, TestRepo } from "../../support/index.ts";
import {
  admin,
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

const ClusterRole: ResourceMapping = {
  group: "rbac.authorization.k8s.io",
  version: "v1",
  kind: "ClusterRole",
  resource: "clusterroles",
  namespaced: false,
  verbs: [],
};
const foreground = { "configsync.gke.io/deletion-propagation-policy": "Foreground" };

test("a RootSync → RootSync → RepoSync → RepoSync chain syncs, each managed by the layer above, and leaves Git top down before its RoleBindings", async (t) => {
  const manager = await startManager(t);
  const client = await admin();
  const id = suffix();
  const namespace = `chain-${id}`;
  const role = `chain-${id}`;
  // What the RepoSyncs' reconcilers manage: RepoSyncs and ConfigMaps in their namespace.
  await client.create(ClusterRole, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: role },
    rules: [
      { apiGroups: ["configsync.gke.io"], resources: ["reposyncs"], verbs: ["*"] },
      { apiGroups: [""], resources: ["configmaps"], verbs: ["*"] },
    ],
  } as KubeObject);
  t.after(() => client.delete(ClusterRole, undefined, role).catch(() => undefined));
  const binding = (sync: string): string =>
    JSON.stringify({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: sync, namespace },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
      subjects: [
        { kind: "ServiceAccount", name: reconcilerName("RepoSync", namespace, sync), namespace: systemNamespace },
      ],
    });
  const repo = await TestRepo.create(t);
  const git = (dir: string) => ({ repo: repo.url, branch: repo.branch, dir });
  const root = `root-${id}`;
  const level1 = `level-1-${id}`;
  await repo.write(
    "level-0/ns.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }),
  );
  await repo.write("level-0/rb-level-2.yaml", binding("level-2"));
  await repo.write("level-0/rb-level-3.yaml", binding("level-3"));
  const dependsOn = ["level-2", "level-3"]
    .map((name) => `rbac.authorization.k8s.io/namespaces/${namespace}/RoleBinding/${name}`)
    .join(",");
  const level1Sync = rootSyncObject(level1, manager.scope, git("level-1"), {
    ...foreground,
    "config.kubernetes.io/depends-on": dependsOn,
  });
  await repo.write("level-0/rootsync-level-1.yaml", JSON.stringify(level1Sync));
  await repo.write(
    "level-1/reposync-level-2.yaml",
    JSON.stringify(repoSyncObject(namespace, "level-2", manager.scope, git("level-2"), foreground)),
  );
  await repo.write(
    "level-2/reposync-level-3.yaml",
    JSON.stringify(repoSyncObject(namespace, "level-3", manager.scope, git("level-3"), foreground)),
  );
  await repo.write(
    "level-3/configmap-level-4.yaml",
    JSON.stringify({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "level-4", namespace },
      data: { key: "value" },
    }),
  );
  const commit = await repo.commit("the chain");
  await createSync(t, rootSyncObject(root, manager.scope, git("level-0"), foreground));

  await synced("RootSync", systemNamespace, root, commit, 120_000);
  await synced("RootSync", systemNamespace, level1, commit, 120_000);
  await synced("RepoSync", namespace, "level-2", commit, 120_000);
  await synced("RepoSync", namespace, "level-3", commit, 120_000);
  const layers: [string, KubeObject | undefined, string | undefined][] = [
    ["root", await getSync("RootSync", systemNamespace, root), undefined],
    ["level-1", await getSync("RootSync", systemNamespace, level1), `:root_${root}`],
    ["level-2", await getSync("RepoSync", namespace, "level-2"), `:root_${level1}`],
    ["level-3", await getSync("RepoSync", namespace, "level-3"), `${namespace}_level-2`],
    ["level-4", await getObject(Mapping.ConfigMap, namespace, "level-4"), `${namespace}_level-3`],
  ];
  for (const [layer, object, manager] of layers) {
    assert.equal(object?.metadata.annotations?.["configsync.gke.io/manager"], manager, `${layer}'s manager`);
    // Applied from Git once and never rewritten: no spec change by a manager, reconciler or the layer above.
    if (layer !== "level-4") assert.equal(object?.metadata.generation, 1, `${layer}'s generation`);
  }

  await repo.remove("level-0/rootsync-level-1.yaml");
  await repo.remove("level-0/rb-level-2.yaml");
  await repo.remove("level-0/rb-level-3.yaml");
  const removal = await repo.commit("remove the chain");
  await eventually(
    async () =>
      (await getSync("RootSync", systemNamespace, level1)) === undefined &&
      (await getObject(Mapping.RoleBinding, namespace, "level-2")) === undefined &&
      (await getObject(Mapping.RoleBinding, namespace, "level-3")) === undefined,
    { timeoutMs: 120_000, what: "the chain and its RoleBindings gone" },
  );
  assert.equal(await getSync("RepoSync", namespace, "level-2"), undefined, "level-2 outlived its RoleBinding");
  assert.equal(await getSync("RepoSync", namespace, "level-3"), undefined, "level-3 outlived its RoleBinding");
  assert.equal(await getObject(Mapping.ConfigMap, namespace, "level-4"), undefined, "level-4 outlived the chain");
  await synced("RootSync", systemNamespace, root, removal, 120_000);
});
