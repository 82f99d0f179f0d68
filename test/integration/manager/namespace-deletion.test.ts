/**
 * reconciler-finalizer-race: deleting a namespace deletes the RoleBinding that lets its
 * RepoSync's reconciler update the RepoSync, so the reconciler can never remove its finalizer and
 * the namespace would stay Terminating forever. The manager removes that finalizer itself when the
 * namespace is Terminating. These tests fail without it: the namespace never goes away.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { eventually, TestRepo } from "../../support/index.ts";
import { grantRepoSyncReconciler } from "../../support/rbac.ts";
import {
  admin,
  configMap,
  createNamespace,
  createSync,
  getObject,
  getSync,
  Mapping,
  reconcilerPids,
  repoSyncObject,
  startManager,
  synced,
  systemNamespace,
  type RunningManager,
} from "./helpers.ts";

const foreground = { "configsync.gke.io/deletion-propagation-policy": "Foreground" };
const deadlineMs = 30_000;

/** A synced RepoSync (Foreground deletion unless told) and a few managed objects in a fresh namespace. */
async function syncedRepoSync(
  t: TestContext,
  manager: RunningManager,
  annotations: Record<string, string> = foreground,
): Promise<string> {
  const namespace = await createNamespace(t, "doomed");
  await grantRepoSyncReconciler(namespace);
  const repo = await TestRepo.create(t);
  for (const name of ["a", "b", "c"]) await repo.write(`${name}.yaml`, configMap(name, undefined, { name }));
  const commit = await repo.commit("three config maps");
  await createSync(
    t,
    repoSyncObject(namespace, "repo-sync", manager.scope, { repo: repo.url, branch: repo.branch }, annotations),
  );
  await synced("RepoSync", namespace, "repo-sync", commit);
  return namespace;
}

/** Deletes the namespace and requires it (and so its RepoSync) to be gone within the deadline. */
async function deleteNamespaceAndWait(namespace: string, manager: RunningManager): Promise<number> {
  const client = await admin();
  const started = Date.now();
  await client.delete(Mapping.Namespace, undefined, namespace);
  try {
    await eventually(async () => (await getObject(Mapping.Namespace, undefined, namespace)) === undefined, {
      timeoutMs: deadlineMs,
      intervalMs: 200,
      what: `namespace ${namespace} deleted`,
    });
  } catch (error) {
    const sync = await getSync("RepoSync", namespace, "repo-sync");
    throw new Error(
      `${String(error)}\nRepoSync finalizers: ${JSON.stringify(sync?.metadata.finalizers)}\nmanager log:\n${manager.logs.slice(-30).join("\n")}`,
    );
  }
  return Date.now() - started;
}

test("deleting the namespace of a Foreground RepoSync completes within 30 s", async (t) => {
  const manager = await startManager(t);
  const namespace = await syncedRepoSync(t, manager);
  const elapsed = await deleteNamespaceAndWait(namespace, manager);
  t.diagnostic(`namespace gone after ${elapsed} ms`);
  assert.equal(await getSync("RepoSync", namespace, "repo-sync"), undefined);
  await eventually(async () => (await reconcilerPids(manager.scope)).length === 0, {
    what: "the reconciler process stopped",
  });
  assert.equal(
    await getObject(Mapping.ServiceAccount, systemNamespace, `ns-reconciler-${namespace}`),
    undefined,
    "the reconciler's ServiceAccount is left",
  );
});

test("the namespace deletion completes even when the reconciler is frozen (SIGSTOP)", async (t) => {
  const manager = await startManager(t);
  const namespace = await syncedRepoSync(t, manager);
  const [pid] = await reconcilerPids(manager.scope, "repo-sync");
  assert.ok(pid !== undefined);
  process.kill(pid, "SIGSTOP");
  t.after(() => {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  });
  const elapsed = await deleteNamespaceAndWait(namespace, manager);
  t.diagnostic(`namespace gone after ${elapsed} ms with the reconciler frozen`);
  await eventually(async () => !(await reconcilerPids(manager.scope)).includes(pid), {
    what: "the frozen reconciler stopped",
  });
});

test("the namespace deletion completes when the reconciler has lost its RoleBinding first (the seed's race)", async (t) => {
  const manager = await startManager(t);
  const namespace = await syncedRepoSync(t, manager);
  const client = await admin();
  // What the namespace controller does first, in the race: the reconciler can no longer update its RepoSync.
  await client.delete(Mapping.RoleBinding, namespace, "configsync.gke.io:ns-reconciler");
  const elapsed = await deleteNamespaceAndWait(namespace, manager);
  t.diagnostic(`namespace gone after ${elapsed} ms without the reconciler's permissions`);
});

test("the namespace deletion completes when the reconciler of an Orphan RepoSync (the default, which holds the finalizer too) has lost its RoleBinding first", async (t) => {
  const manager = await startManager(t);
  const namespace = await syncedRepoSync(t, manager, {});
  const sync = await getSync("RepoSync", namespace, "repo-sync");
  assert.ok(sync?.metadata.finalizers?.includes("configsync.gke.io/reconciler"), "no reconciler finalizer with Orphan");
  await (await admin()).delete(Mapping.RoleBinding, namespace, "configsync.gke.io:ns-reconciler");
  const elapsed = await deleteNamespaceAndWait(namespace, manager);
  t.diagnostic(`namespace gone after ${elapsed} ms without the reconciler's permissions`);
});

test("the namespace deletion completes when the reconciler is not running at all (deployment mode, no kubelet)", async (t) => {
  const manager = await startManager(t, { mode: "deployment" });
  const namespace = await createNamespace(t, "doomed");
  await createSync(
    t,
    repoSyncObject(
      namespace,
      "repo-sync",
      manager.scope,
      { repo: "https://example.invalid/r.git", branch: "main" },
      foreground,
    ),
  );
  const client = await admin();
  await eventually(
    async () => (await getObject(Mapping.Deployment, systemNamespace, `ns-reconciler-${namespace}`)) !== undefined,
    { what: "the reconciler Deployment" },
  );
  // A reconciler that once ran (and added its finalizer) but has no pod now.
  await client.patch(
    Mapping.RepoSync,
    namespace,
    "repo-sync",
    { metadata: { finalizers: ["configsync.gke.io/reconciler-manager", "configsync.gke.io/reconciler"] } },
    "merge",
  );
  await deleteNamespaceAndWait(namespace, manager);
  assert.equal(
    await getObject(Mapping.Deployment, systemNamespace, `ns-reconciler-${namespace}`),
    undefined,
    "the Deployment was left behind",
  );
  assert.match(await manager.metrics(), /driftless_finalizer_removals_total\{reason="namespace-terminating"\} [1-9]/);
});
