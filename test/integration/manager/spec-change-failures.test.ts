/**
 * A spec change the reconciler cannot follow. A sync whose spec turned invalid is still deleted as its
 * policy says, by a reconciler the manager keeps or starts for that alone (Config Sync's manager waits for
 * its reconciler's finalizer whether or not the spec validates), also after the manager restarted; and a
 * reconciler failing on a new spec says so for that generation (observedGeneration), as Config Sync's does.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Finalizer } from "@driftless/api";
import { eventually, suffix, TestRepo } from "../../support/index.ts";
import { grantRepoSyncReconciler } from "../../support/rbac.ts";
import {
  admin,
  conditionOf,
  configMap,
  createNamespace,
  createSync,
  getObject,
  getSync,
  Mapping,
  reconcilerPids,
  repoSyncObject,
  rootSyncObject,
  startManager,
  synced,
  systemNamespace,
} from "./helpers.ts";

const foreground = { "configsync.gke.io/deletion-propagation-policy": "Foreground" };
/** Config Sync refuses token auth without a Secret (KNV1061); the API server takes it. */
const invalidAuth = { spec: { git: { auth: "token" } } };

async function stalledByValidation(kind: "RootSync" | "RepoSync", namespace: string, name: string): Promise<void> {
  await eventually(
    async () => {
      const stalled = conditionOf(await getSync(kind, namespace, name), "Stalled");
      return stalled?.status === "True" && stalled.reason === "Validation";
    },
    { what: `${kind} ${namespace}/${name} Stalled (Validation)` },
  );
}

test("a synced RepoSync whose spec turned invalid is deleted with its objects (Foreground) after the manager restarted, by a reconciler started only to finish the deletion", async (t) => {
  const manager = await startManager(t);
  const namespace = await createNamespace(t, "invdel");
  await grantRepoSyncReconciler(namespace);
  const repo = await TestRepo.create(t);
  await repo.write("a1.yaml", configMap("a1", undefined, { v: "1" }));
  const commit = await repo.commit("a1");
  await createSync(
    t,
    repoSyncObject(namespace, "repo-sync", manager.scope, { repo: repo.url, branch: repo.branch }, foreground),
  );
  await synced("RepoSync", namespace, "repo-sync", commit);
  const client = await admin();
  await client.patch(Mapping.RepoSync, namespace, "repo-sync", invalidAuth, "merge");
  await stalledByValidation("RepoSync", namespace, "repo-sync");

  // A restart (or a new leader) runs none of the previous manager's reconcilers.
  assert.equal(await manager.stop(), 0);
  const next = await startManager(t, { scope: manager.scope });
  await eventually(async () => next.isLeader(), { what: "the new manager leading" });
  assert.deepEqual(await reconcilerPids(next.scope, "repo-sync"), [], "an invalid spec got a reconciler to sync it");

  await client.delete(Mapping.RepoSync, namespace, "repo-sync");
  await eventually(async () => (await getSync("RepoSync", namespace, "repo-sync")) === undefined, {
    timeoutMs: 90_000,
    what: "the RepoSync deleted",
  });
  assert.equal(await getObject(Mapping.ConfigMap, namespace, "a1"), undefined, "Foreground left a1 behind");
  await eventually(async () => (await reconcilerPids(next.scope, "repo-sync")).length === 0, {
    what: "the finalizing reconciler gone with its sync",
  });
});

test("deployment mode: an invalid RepoSync being deleted gets its reconciler Deployment back when it is missing, since only it can finish the deletion", async (t) => {
  const manager = await startManager(t, { mode: "deployment" });
  const namespace = await createNamespace(t, "invdep");
  const client = await admin();
  const reconciler = `ns-reconciler-${namespace}`;
  await createSync(
    t,
    repoSyncObject(namespace, "repo-sync", manager.scope, { repo: "https://example.invalid/r.git", branch: "main" }),
  );
  const live = await eventually(
    async () => {
      const sync = await getSync("RepoSync", namespace, "repo-sync");
      return sync?.metadata.finalizers?.includes(Finalizer.ReconcilerManager) === true ? sync : undefined;
    },
    { what: "the manager finalizer" },
  );
  await eventually(() => getObject(Mapping.Deployment, systemNamespace, reconciler), { what: "the Deployment" });
  // No kubelet here, so no pod adds the reconciler's finalizer: added as its first job would.
  await client.patch(
    Mapping.RepoSync,
    namespace,
    "repo-sync",
    { metadata: { finalizers: [...(live.metadata.finalizers ?? []), Finalizer.Reconciler] } },
    "merge",
  );
  await client.patch(Mapping.RepoSync, namespace, "repo-sync", invalidAuth, "merge");
  await stalledByValidation("RepoSync", namespace, "repo-sync");
  assert.ok(
    await getObject(Mapping.Deployment, systemNamespace, reconciler),
    "the reconciler went when the spec turned invalid",
  );

  // The Deployment is lost while the spec is invalid (deleted by hand, or never there): the deletion brings it back.
  await client.delete(Mapping.Deployment, systemNamespace, reconciler);
  await eventually(async () => (await getObject(Mapping.Deployment, systemNamespace, reconciler)) === undefined, {
    what: "the Deployment deleted",
  });
  await client.delete(Mapping.RepoSync, namespace, "repo-sync");
  await eventually(() => getObject(Mapping.Deployment, systemNamespace, reconciler), {
    timeoutMs: 30_000,
    what: "the Deployment set up again to finish the deletion",
  });
  assert.ok(await getSync("RepoSync", namespace, "repo-sync"), "the sync went before its reconciler finished");

  // Its finalizer done (as the pod would), the manager tears the reconciler down and lets go.
  await client.patch(
    Mapping.RepoSync,
    namespace,
    "repo-sync",
    { metadata: { finalizers: [Finalizer.ReconcilerManager] } },
    "merge",
  );
  await eventually(async () => (await getSync("RepoSync", namespace, "repo-sync")) === undefined, {
    what: "the RepoSync deleted",
  });
  await eventually(async () => (await getObject(Mapping.Deployment, systemNamespace, reconciler)) === undefined, {
    what: "the Deployment torn down",
  });
});

test("a reconciler failing on a new spec reports Stalled for that generation: observedGeneration follows it, as Config Sync's manager writes it", async (t) => {
  const manager = await startManager(t);
  const target = await createNamespace(t, "obsgen");
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("obs", target, { v: "1" }));
  const commit = await repo.commit("one object");
  const name = `obs-${suffix()}`;
  // An hour's period: the reconciler of the first spec writes no status after its sync.
  await createSync(t, rootSyncObject(name, manager.scope, { repo: repo.url, branch: repo.branch, period: "1h" }));
  const first = await synced("RootSync", systemNamespace, name, commit, 90_000);
  assert.equal((first["status"] as { observedGeneration?: number }).observedGeneration, first.metadata.generation);

  // Every request of the new spec's reconciler times out: it exits at start, again and again.
  const client = await admin();
  await client.patch(
    Mapping.RootSync,
    systemNamespace,
    name,
    { spec: { override: { apiServerTimeout: "1ms" } } },
    "merge",
  );
  const failing = await eventually(
    async () => {
      const sync = await getSync("RootSync", systemNamespace, name);
      return conditionOf(sync, "Stalled")?.reason === "ReconcilerFailed" ? sync : undefined;
    },
    { timeoutMs: 90_000, what: "the failing reconciler reported" },
  );
  assert.ok((failing.metadata.generation ?? 0) > (first.metadata.generation ?? 0));
  assert.equal(
    (failing["status"] as { observedGeneration?: number }).observedGeneration,
    failing.metadata.generation,
    "observedGeneration still names the spec before the failing one",
  );
  // As Config Sync's SetStalled on a transition to True: the last commit's Syncing condition goes, and the
  // stall is one error, its message.
  assert.equal(conditionOf(failing, "Syncing"), undefined, "the Syncing condition of the last sync stayed");
  assert.deepEqual((conditionOf(failing, "Stalled") as { errorSummary?: unknown }).errorSummary, {
    totalCount: 1,
    errorCountAfterTruncation: 1,
  });

  // Fixed, so that its reconciler can finish the deletion at the end of the test.
  await client.patch(Mapping.RootSync, systemNamespace, name, { spec: { override: null } }, "merge");
  await eventually(
    async () => conditionOf(await getSync("RootSync", systemNamespace, name), "Stalled")?.status === "False",
    {
      timeoutMs: 90_000,
      what: "the reconciler running again",
    },
  );
});
