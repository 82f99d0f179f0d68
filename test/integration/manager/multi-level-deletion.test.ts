/**
 * Config Sync's TestReconcilerFinalizer_MultiLevelForeground and _MultiLevelMixed: a RootSync deleted with
 * Foreground propagation deletes the RepoSync it manages, which then finalizes by its own policy (Foreground:
 * its objects go too; Orphan: they stay, released), before the RootSync itself goes.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { resourceGroupMapping } from "@driftless/applier";
import { reconcilerName } from "@driftless/api";
import type { KubeObject } from "@driftless/kube";
import { eventually, suffix, TestRepo } from "../../support/index.ts";
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

const foreground = { "configsync.gke.io/deletion-propagation-policy": "Foreground" };

/** Config Sync's labels and annotations, and the ApplySet label a managed object carries. */
function managementMetadata(object: KubeObject): string[] {
  const ours = (key: string): boolean =>
    key.startsWith("configsync.gke.io/") ||
    key.startsWith("configmanagement.gke.io/") ||
    key === "config.k8s.io/owning-inventory" ||
    key === "applyset.kubernetes.io/part-of" ||
    key === "app.kubernetes.io/managed-by";
  return [...Object.keys(object.metadata.annotations ?? {}), ...Object.keys(object.metadata.labels ?? {})].filter(ours);
}

interface Chain {
  readonly rootName: string;
  readonly namespace: string;
}

/**
 * A RootSync (Foreground) declaring a Namespace, a ConfigMap in it, the RepoSync's RoleBinding and a RepoSync
 * (depending on that binding, so it goes first) whose own source declares another ConfigMap there; all synced.
 */
async function syncedChain(
  t: TestContext,
  repoSyncAnnotations: Record<string, string>,
  namespaceAnnotations: Record<string, string>,
): Promise<Chain> {
  const manager = await startManager(t);
  const client = await admin();
  const id = suffix();
  const namespace = `multi-${id}`;
  const rootName = `root-${id}`;
  t.after(async () => {
    await client.delete(Mapping.Namespace, undefined, namespace).catch(() => undefined);
  });
  const repo = await TestRepo.create(t);
  const git = (dir: string) => ({ repo: repo.url, branch: repo.branch, dir });
  await repo.write(
    "root/ns.yaml",
    JSON.stringify({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: namespace, annotations: namespaceAnnotations },
    }),
  );
  await repo.write("root/cm.yaml", configMap("root-cm", namespace, { from: "root" }));
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
  const repoSync = repoSyncObject(namespace, "repo-sync", manager.scope, git("repo"), {
    ...repoSyncAnnotations,
    "config.kubernetes.io/depends-on": `rbac.authorization.k8s.io/namespaces/${namespace}/RoleBinding/syncs-repo-sync`,
  });
  await repo.write("root/reposync.yaml", JSON.stringify(repoSync));
  await repo.write("repo/cm.yaml", configMap("repo-cm", namespace, { from: "repo" }));
  const commit = await repo.commit("a RootSync managing a RepoSync");
  await createSync(t, rootSyncObject(rootName, manager.scope, git("root"), foreground));
  await synced("RootSync", systemNamespace, rootName, commit, 120_000);
  await synced("RepoSync", namespace, "repo-sync", commit, 120_000);
  assert.ok(await getObject(Mapping.ConfigMap, namespace, "repo-cm"), "the RepoSync applied nothing");
  await client.delete(Mapping.RootSync, systemNamespace, rootName);
  return { rootName, namespace };
}

async function rootSyncGone({ rootName }: Chain): Promise<void> {
  await eventually(async () => (await getSync("RootSync", systemNamespace, rootName)) === undefined, {
    timeoutMs: 120_000,
    what: "the RootSync deleted",
  });
  assert.equal(await getObject(resourceGroupMapping, systemNamespace, rootName), undefined, "the ResourceGroup left");
}

test("a Foreground RootSync managing a Foreground RepoSync: deleting the RootSync deletes the RepoSync, both syncs' objects and the Namespace (TestReconcilerFinalizer_MultiLevelForeground)", async (t) => {
  const chain = await syncedChain(t, foreground, {});
  await rootSyncGone(chain);
  const { namespace } = chain;
  assert.equal(await getSync("RepoSync", namespace, "repo-sync"), undefined, "the RepoSync outlived the RootSync");
  await eventually(async () => (await getObject(Mapping.Namespace, undefined, namespace)) === undefined, {
    timeoutMs: 60_000,
    what: "the Namespace deleted",
  });
});

test("a Foreground RootSync managing an Orphan RepoSync: deleting the RootSync deletes the RepoSync and the RootSync's objects; the RepoSync's object and a detached Namespace stay, released (TestReconcilerFinalizer_MultiLevelMixed)", async (t) => {
  const chain = await syncedChain(t, {}, { "client.lifecycle.config.k8s.io/deletion": "detach" });
  await rootSyncGone(chain);
  const { namespace } = chain;
  assert.equal(await getSync("RepoSync", namespace, "repo-sync"), undefined, "the RepoSync outlived the RootSync");
  assert.equal(await getObject(Mapping.ConfigMap, namespace, "root-cm"), undefined, "the RootSync's object stayed");
  const ns = await getObject(Mapping.Namespace, undefined, namespace);
  assert.ok(ns !== undefined && ns.metadata.deletionTimestamp === undefined, "the detached Namespace is deleted");
  assert.deepEqual(managementMetadata(ns), [], "the detached Namespace is still marked managed");
  const released = await getObject(Mapping.ConfigMap, namespace, "repo-cm");
  assert.ok(released !== undefined, "the Orphan RepoSync's object is deleted");
  assert.deepEqual(managementMetadata(released), [], "the Orphan RepoSync's object is still marked managed");
});
