import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject } from "@driftless/kube";
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
  reconcilerLog,
  reconcilerPids,
  repoSyncObject,
  rootSyncObject,
  startManager,
  synced,
  systemNamespace,
  type RunningManager,
} from "./helpers.ts";

const subjectsOf = (binding: KubeObject | undefined): string[] =>
  ((binding?.["subjects"] ?? []) as { name: string }[]).map((s) => s.name);

test("a RootSync and a RepoSync each get their own reconciler, and deleting them tears it down", async (t) => {
  const manager = await startManager(t);
  const namespace = await createNamespace(t);
  await grantRepoSyncReconciler(namespace);
  const target = await createNamespace(t, "root-target");
  const repo = await TestRepo.create(t);
  await repo.write("repo/cm.yaml", configMap("from-repo-sync", undefined, { team: "a" }));
  await repo.write("root/cm.yaml", configMap("from-root-sync", target, { team: "platform" }));
  const commit = await repo.commit("one object for each sync");
  const rootName = `root-${suffix()}`;
  // Rare polls: deleting must not wait for the reconciler's next poll to notice.
  await createSync(
    t,
    repoSyncObject(namespace, "repo-sync", manager.scope, {
      repo: repo.url,
      branch: repo.branch,
      dir: "repo",
      period: "10m",
    }),
  );
  await createSync(
    t,
    rootSyncObject(rootName, manager.scope, { repo: repo.url, branch: repo.branch, dir: "root", period: "10m" }),
  );

  const repoSync = await synced("RepoSync", namespace, "repo-sync", commit);
  const rootSync = await synced("RootSync", systemNamespace, rootName, commit);
  assert.ok(await getObject(Mapping.ConfigMap, namespace, "from-repo-sync"));
  assert.ok(await getObject(Mapping.ConfigMap, target, "from-root-sync"));

  const nsReconciler = `ns-reconciler-${namespace}`;
  const rootReconciler = `root-reconciler-${rootName}`;
  for (const [sync, reconciler] of [
    [repoSync, nsReconciler],
    [rootSync, rootReconciler],
  ] as const) {
    assert.equal((sync["status"] as Record<string, unknown>)["reconciler"], reconciler);
    assert.ok(
      sync.metadata.finalizers?.includes("configsync.gke.io/reconciler-manager"),
      `${reconciler}: no manager finalizer`,
    );
    // Orphan (the default) too: at deletion the reconciler releases the objects, as Config Sync's does.
    assert.ok(
      sync.metadata.finalizers?.includes("configsync.gke.io/reconciler"),
      `${reconciler}: no reconciler finalizer`,
    );
    // Config Sync's manager only clears a Stalled condition that was True: a sync that never stalled has none.
    assert.equal(conditionOf(sync, "Stalled"), undefined);
    assert.ok(await getObject(Mapping.ServiceAccount, systemNamespace, reconciler), `no ServiceAccount ${reconciler}`);
  }
  await eventually(
    async () => conditionOf(await getSync("RepoSync", namespace, "repo-sync"), "Reconciling")?.status === "False",
    { what: "Reconciling=False" },
  );
  assert.equal((await reconcilerPids(manager.scope, "repo-sync")).length, 1, "one reconciler process for the RepoSync");
  assert.equal((await reconcilerPids(manager.scope, rootName)).length, 1, "one reconciler process for the RootSync");
  const roleBinding = await getObject(Mapping.RoleBinding, namespace, "configsync.gke.io:ns-reconciler");
  assert.deepEqual(subjectsOf(roleBinding), [nsReconciler]);
  assert.ok(
    subjectsOf(await getObject(Mapping.ClusterRoleBinding, undefined, "configsync.gke.io:root-reconciler")).includes(
      rootReconciler,
    ),
  );

  const client = await admin();
  await client.delete(Mapping.RepoSync, namespace, "repo-sync");
  await client.delete(Mapping.RootSync, systemNamespace, rootName);
  await eventually(
    async () =>
      (await getSync("RepoSync", namespace, "repo-sync")) === undefined &&
      (await getSync("RootSync", systemNamespace, rootName)) === undefined,
    {
      what: "both syncs deleted",
    },
  );
  // Teardown happened before the manager let go: nothing of either reconciler is left.
  assert.deepEqual(await reconcilerPids(manager.scope), [], "a reconciler process survived its sync");
  assert.equal(await getObject(Mapping.ServiceAccount, systemNamespace, nsReconciler), undefined);
  assert.equal(await getObject(Mapping.ServiceAccount, systemNamespace, rootReconciler), undefined);
  assert.equal(
    await getObject(Mapping.RoleBinding, namespace, "configsync.gke.io:ns-reconciler"),
    undefined,
    "the last subject out deletes the shared RoleBinding",
  );
  assert.ok(
    !subjectsOf(await getObject(Mapping.ClusterRoleBinding, undefined, "configsync.gke.io:root-reconciler")).includes(
      rootReconciler,
    ),
  );
  // Orphan (the default): the managed objects stay, no longer managed.
  for (const left of [
    await getObject(Mapping.ConfigMap, namespace, "from-repo-sync"),
    await getObject(Mapping.ConfigMap, target, "from-root-sync"),
  ]) {
    assert.ok(left !== undefined, "an orphaned object was deleted");
    assert.equal(left.metadata.annotations?.["configsync.gke.io/manager"], undefined, "an orphan is still managed");
  }
});

const reconcilerFinalizer = "configsync.gke.io/reconciler";

/** A RepoSync synced by a manager of its own from one ConfigMap (`object`), polling rarely: only events move it. */
async function syncedRepoSync(
  t: TestContext,
  object: string,
  annotations: Record<string, string> = {},
): Promise<{ manager: RunningManager; namespace: string; synced: KubeObject }> {
  const manager = await startManager(t);
  const namespace = await createNamespace(t);
  await grantRepoSyncReconciler(namespace);
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", object);
  const commit = await repo.commit("one object");
  const git = { repo: repo.url, branch: repo.branch, period: "10m" };
  await createSync(t, repoSyncObject(namespace, "repo-sync", manager.scope, git, annotations));
  const sync = await synced("RepoSync", namespace, "repo-sync", commit);
  assert.ok(sync.metadata.finalizers?.includes(reconcilerFinalizer), "no reconciler finalizer");
  return { manager, namespace, synced: sync };
}

/** Moves the RepoSync out of `manager`'s selector. */
async function leaveSelector(manager: RunningManager, namespace: string): Promise<void> {
  const labels = Object.fromEntries(Object.keys(manager.scope.labels).map((key) => [key, "another-manager"]));
  await (await admin()).patch(Mapping.RepoSync, namespace, "repo-sync", { metadata: { labels } }, "merge");
}

test("a RepoSync that leaves the manager's selector is let go (reconciler stopped, both finalizers removed, objects left), so its later deletion waits for no one", async (t) => {
  const { manager, namespace } = await syncedRepoSync(t, configMap("kept", undefined, { team: "a" }));

  await leaveSelector(manager, namespace);
  await eventually(
    async () => ((await getSync("RepoSync", namespace, "repo-sync"))?.metadata.finalizers ?? []).length === 0,
    { timeoutMs: 30_000, what: "the RepoSync's finalizers removed" },
  );
  assert.deepEqual(await reconcilerPids(manager.scope, "repo-sync"), [], "its reconciler still runs");
  assert.ok(await getObject(Mapping.ConfigMap, namespace, "kept"), "a managed object was deleted");

  await (await admin()).delete(Mapping.RepoSync, namespace, "repo-sync");
  await eventually(async () => (await getSync("RepoSync", namespace, "repo-sync")) === undefined, {
    timeoutMs: 10_000,
    what: "the RepoSync deleted",
  });
  assert.ok(await getObject(Mapping.ConfigMap, namespace, "kept"), "a managed object was deleted");
});

test("a RepoSync whose Foreground deletion is under way keeps its reconciler finalizer when it leaves the manager's selector: the deletion is not cut short", async (t) => {
  // A finalizer of another controller's holds the managed object, and so the deletion, until the test lifts it.
  const held = configMap("held", undefined, { team: "a" }, { finalizers: ["driftless.test/hold"] });
  const foreground = { "configsync.gke.io/deletion-propagation-policy": "Foreground" };
  const { manager, namespace } = await syncedRepoSync(t, held, foreground);
  const client = await admin();
  const lift = (): Promise<unknown> =>
    client
      .patch(Mapping.ConfigMap, namespace, "held", { metadata: { finalizers: null } }, "merge")
      .catch(() => undefined);
  t.after(lift);

  await client.delete(Mapping.RepoSync, namespace, "repo-sync");
  await eventually(
    async () => (await getObject(Mapping.ConfigMap, namespace, "held"))?.metadata.deletionTimestamp !== undefined,
    { what: "the reconciler deleting the managed object" },
  );
  await leaveSelector(manager, namespace);
  const left = await eventually(
    async () => {
      const sync = await getSync("RepoSync", namespace, "repo-sync");
      return sync?.metadata.finalizers?.includes("configsync.gke.io/reconciler-manager") === false ? sync : undefined;
    },
    { timeoutMs: 30_000, what: "the manager to let the RepoSync go" },
  );
  assert.deepEqual(left.metadata.finalizers, [reconcilerFinalizer]);
  // For whichever manager serves it now to finish; here none does, so the test ends it by hand.
  await lift();
  await client
    .patch(Mapping.RepoSync, namespace, "repo-sync", { metadata: { finalizers: null } }, "merge")
    .catch(() => undefined);
});

test("a synced RepoSync that lost its reconciler finalizer (as a manager it left strips it) gets it back at once, not at the next poll", async (t) => {
  const { namespace, synced: before } = await syncedRepoSync(t, configMap("kept", undefined, { team: "a" }));

  const finalizers = (before.metadata.finalizers ?? []).filter((f) => f !== reconcilerFinalizer);
  await (await admin()).patch(Mapping.RepoSync, namespace, "repo-sync", { metadata: { finalizers } }, "merge");
  await eventually(
    async () =>
      (await getSync("RepoSync", namespace, "repo-sync"))?.metadata.finalizers?.includes(reconcilerFinalizer) === true,
    { timeoutMs: 20_000, what: "the reconciler finalizer back" },
  );
});

test("changing a sync's spec restarts its reconciler on the new spec", async (t) => {
  const manager = await startManager(t);
  const namespace = await createNamespace(t);
  await grantRepoSyncReconciler(namespace);
  const repo = await TestRepo.create(t);
  await repo.write("one/cm.yaml", configMap("one", undefined, { v: "1" }));
  await repo.write("two/cm.yaml", configMap("two", undefined, { v: "2" }));
  const commit = await repo.commit("two directories");
  await createSync(
    t,
    repoSyncObject(namespace, "repo-sync", manager.scope, { repo: repo.url, branch: repo.branch, dir: "one" }),
  );
  await synced("RepoSync", namespace, "repo-sync", commit);
  const [before] = await reconcilerPids(manager.scope, "repo-sync");
  assert.ok(before !== undefined);

  const client = await admin();
  await client.patch(
    Mapping.RepoSync,
    namespace,
    "repo-sync",
    { spec: { git: { dir: "two", period: "3s" } } },
    "merge",
  );
  await eventually(async () => (await getObject(Mapping.ConfigMap, namespace, "two")) !== undefined, {
    timeoutMs: 60_000,
    what: "the new directory synced",
  });
  const after = await eventually(
    async () => {
      const pids = await reconcilerPids(manager.scope, "repo-sync");
      return pids.length === 1 && pids[0] !== before ? pids[0] : undefined;
    },
    { what: "a new reconciler process" },
  );
  assert.notEqual(after, before);
  await eventually(async () => (await getObject(Mapping.ConfigMap, namespace, "one")) === undefined, {
    what: "the old directory's object pruned",
  });
});

test("an invalid sync is reported Stalled (KNV1061) and gets no reconciler", async (t) => {
  const manager = await startManager(t);
  const namespace = await createNamespace(t);
  const client = await admin();
  const tooLong = `r${"x".repeat(45)}`;
  const bad = [
    repoSyncObject(namespace, tooLong, manager.scope, { repo: "https://example.invalid/r.git", branch: "main" }),
    {
      ...rootSyncObject(`root-${suffix()}`, manager.scope, { repo: "https://example.invalid/r.git", branch: "main" }),
      metadata: { name: `root-${suffix()}`, namespace, labels: { ...manager.scope.labels } },
    },
    {
      // OCI is supported; Google's node identity is not (refused, naming the alternative).
      ...repoSyncObject(namespace, "oci-sync", manager.scope, { repo: "x", branch: "main" }),
      spec: { sourceType: "oci", oci: { image: "example.invalid/i:1", auth: "gcenode" } },
    },
    // Config Sync's TestControllerValidationErrors: no RepoSync in config-management-system.
    repoSyncObject(systemNamespace, `repo-${suffix()}`, manager.scope, {
      repo: "https://example.invalid/r.git",
      branch: "main",
    }),
    // Config Sync's TestControllerValidationErrors: a Git Secret whose copy would be named past 253 characters.
    {
      ...repoSyncObject(namespace, "repo-test", manager.scope, { repo: "x", branch: "main" }),
      spec: { git: { repo: "https://example.invalid/r.git", auth: "ssh", secretRef: { name: "a".repeat(253) } } },
    },
  ];
  for (const obj of bad) await createSync(t, obj);
  for (const obj of bad) {
    const stalled = await eventually(
      async () => {
        const sync = await client.get(
          obj.kind === "RootSync" ? Mapping.RootSync : Mapping.RepoSync,
          obj.metadata.namespace,
          obj.metadata.name,
        );
        const condition = conditionOf(sync, "Stalled");
        return condition?.status === "True" ? { sync, condition } : undefined;
      },
      { what: `${obj.kind} ${obj.metadata.name} Stalled` },
    );
    assert.equal(stalled.condition.reason, "Validation");
    // Config Sync's SetStalled: the error's text alone, no errors list, a summary of one; Reconciling untouched.
    const { errors, errorSummary } = stalled.condition as { errors?: unknown; errorSummary?: unknown };
    assert.equal(errors, undefined);
    assert.deepEqual(errorSummary, { totalCount: 1, errorCountAfterTruncation: 1 });
    assert.equal(conditionOf(stalled.sync, "Reconciling"), undefined, "an invalid sync was never being set up");
    // The message leads with the code, as Config Sync's Stalled condition does.
    assert.match(String(stalled.condition.message), /^KNV1061: /);
    if (obj.kind === "RootSync")
      assert.match(
        String(stalled.condition.message),
        new RegExp(
          `^KNV1061: RootSync objects are only allowed in the config-management-system namespace, not in ${namespace}`,
        ),
      );
    if (obj.kind === "RepoSync" && obj.metadata.namespace === systemNamespace)
      assert.equal(
        stalled.condition.message,
        "KNV1061: RepoSync objects are not allowed in the config-management-system namespace\n\nFor more information, see https://g.co/cloud/acm-errors#knv1061",
      );
    if (obj.metadata.name === "repo-test")
      assert.match(
        String(stalled.condition.message),
        /^KNV1061: The managed secret name "ns-reconciler-[^"]+-repo-test-9-a{253}" is invalid: must be no more than 253 characters\. To fix it, update '\.spec\.git\.secretRef\.name'/,
      );
    assert.deepEqual(stalled.sync?.metadata.finalizers ?? [], [], "an invalid sync got a finalizer");
  }
  assert.deepEqual(await reconcilerPids(manager.scope), []);
  // No reconciler ever ran, so none added its finalizer (as in Config Sync): nothing holds the deletion.
  for (const obj of bad) {
    const m = obj.kind === "RootSync" ? Mapping.RootSync : Mapping.RepoSync;
    await client.delete(m, obj.metadata.namespace, obj.metadata.name);
    await eventually(async () => (await client.get(m, obj.metadata.namespace, obj.metadata.name)) === undefined, {
      what: `${obj.kind} ${obj.metadata.name} deleted`,
    });
  }
});

test("a Helm chart of the form <repo>/<chart> is accepted by the API and reported Stalled in Config Sync's words (KNV1061), with no reconciler", async (t) => {
  const manager = await startManager(t);
  const namespace = await createNamespace(t);
  const client = await admin();
  const helm = { sourceType: "helm", helm: { repo: "oci://registry.invalid", chart: "charts/web", auth: "none" } };
  const syncs = [
    { ...rootSyncObject(`root-${suffix()}`, manager.scope, { repo: "x", branch: "main" }), spec: helm },
    { ...repoSyncObject(namespace, "repo-sync", manager.scope, { repo: "x", branch: "main" }), spec: helm },
  ];
  // Config Sync's CRD has no rule for the chart: the API server must take it.
  for (const obj of syncs) await createSync(t, obj);
  for (const obj of syncs) {
    const mapping = obj.kind === "RootSync" ? Mapping.RootSync : Mapping.RepoSync;
    const stalled = await eventually(
      async () => {
        const condition = conditionOf(await client.get(mapping, obj.metadata.namespace, obj.metadata.name), "Stalled");
        return condition?.status === "True" ? condition : undefined;
      },
      { what: `${obj.kind} ${obj.metadata.name} Stalled` },
    );
    assert.equal(stalled.reason, "Validation");
    assert.equal(
      stalled.message,
      `KNV1061: ${obj.kind} field spec.helm.chart must not contain a slash (/)\n\nFor more information, see https://g.co/cloud/acm-errors#knv1061`,
    );
  }
  assert.deepEqual(await reconcilerPids(manager.scope), []);
});

test("a container name in spec.override that driftless does not run is reported as the OverridesIgnored warning, removed once the spec drops it", async (t) => {
  const manager = await startManager(t);
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("overrides", "default", { v: "1" }));
  const commit = await repo.commit("one object");
  const name = `root-${suffix()}`;
  await createSync(
    t,
    rootSyncObject(
      name,
      manager.scope,
      { repo: repo.url, branch: repo.branch },
      {},
      {
        // git-sync is Config Sync's and maps to the reconciler; "git-sink" is nobody's.
        logLevels: [
          { containerName: "git-sync", logLevel: 2 },
          { containerName: "git-sink", logLevel: 2 },
        ],
      },
    ),
  );
  await synced("RootSync", systemNamespace, name, commit);
  const warning = await eventually(
    async () => {
      const condition = conditionOf(await getSync("RootSync", systemNamespace, name), "OverridesIgnored");
      return condition?.status === "True" ? condition : undefined;
    },
    { what: "the OverridesIgnored warning" },
  );
  assert.equal(warning.reason, "UnknownContainer");
  assert.match(String(warning.message), /"git-sink"/);
  assert.doesNotMatch(String(warning.message), /"git-sync"/);
  const client = await admin();
  await client.patch(Mapping.RootSync, systemNamespace, name, { spec: { override: { logLevels: null } } }, "merge");
  await eventually(
    async () => conditionOf(await getSync("RootSync", systemNamespace, name), "OverridesIgnored") === undefined,
    { what: "the warning removed" },
  );
});

test("a reconciler process killed with SIGKILL is restarted and keeps syncing", async (t) => {
  const manager = await startManager(t);
  const namespace = await createNamespace(t);
  await grantRepoSyncReconciler(namespace);
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("a", undefined, { v: "1" }));
  await createSync(t, repoSyncObject(namespace, "repo-sync", manager.scope, { repo: repo.url, branch: repo.branch }));
  await synced("RepoSync", namespace, "repo-sync", await repo.commit("v1"));
  const [pid] = await reconcilerPids(manager.scope, "repo-sync");
  assert.ok(pid !== undefined);
  process.kill(pid, "SIGKILL");
  await eventually(
    async () => {
      const pids = await reconcilerPids(manager.scope, "repo-sync");
      return pids.length === 1 && pids[0] !== pid;
    },
    { what: "the reconciler restarted" },
  );
  await repo.write("cm.yaml", configMap("a", undefined, { v: "2" }));
  const next = await repo.commit("v2");
  await synced("RepoSync", namespace, "repo-sync", next, 90_000).catch(async (error: unknown) => {
    throw new Error(`${String(error)}\n${await reconcilerLog(manager.scope, `ns-reconciler-${namespace}`)}`);
  });
  assert.deepEqual((await getObject(Mapping.ConfigMap, namespace, "a"))?.["data"], { v: "2" });
});

test("serves /metrics, /healthz and /readyz, and SIGTERM stops every reconciler and leaves the setup intact for the next manager", async (t) => {
  const manager = await startManager(t);
  const namespace = await createNamespace(t);
  await grantRepoSyncReconciler(namespace);
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("a", undefined, { v: "1" }));
  const first = await repo.commit("v1");
  await createSync(t, repoSyncObject(namespace, "repo-sync", manager.scope, { repo: repo.url, branch: repo.branch }));
  await synced("RepoSync", namespace, "repo-sync", first);
  const base = `http://127.0.0.1:${manager.metricsPort}`;
  assert.equal((await fetch(`${base}/healthz`)).status, 200);
  assert.equal((await fetch(`${base}/readyz`)).status, 200);
  const metrics = await eventually(
    async () => {
      const text = await manager.metrics();
      // The manager's job ends after its reconciler starts, and may end after the sync: its duration comes then.
      return /driftless_reconcilers\{state="running"\} 1/.test(text) &&
        text.includes('driftless_job_duration_seconds_count{queue="manager",result="success"}')
        ? text
        : undefined;
    },
    { what: "one running reconciler and a finished manager job in /metrics" },
  );
  for (const series of [
    'driftless_queue_jobs{queue="manager",state="waiting"}',
    'driftless_job_duration_seconds_count{queue="manager",result="success"}',
    "driftless_finalizer_removals_total",
    "process_resident_memory_bytes",
  ]) {
    assert.ok(metrics.includes(series), `/metrics lacks ${series}`);
  }

  assert.equal(await manager.stop(), 0, "SIGTERM is a clean exit");
  assert.deepEqual(await reconcilerPids(manager.scope), [], "a reconciler outlived the manager");
  const sync = await getSync("RepoSync", namespace, "repo-sync");
  assert.ok(
    sync?.metadata.finalizers?.includes("configsync.gke.io/reconciler-manager"),
    "shutdown is not deletion: the finalizer stays",
  );
  assert.ok(
    await getObject(Mapping.ServiceAccount, systemNamespace, `ns-reconciler-${namespace}`),
    "shutdown is not teardown: the ServiceAccount stays",
  );

  const next = await startManager(t, { scope: manager.scope });
  await repo.write("cm.yaml", configMap("a", undefined, { v: "2" }));
  await synced("RepoSync", namespace, "repo-sync", await repo.commit("v2"));
  assert.equal((await reconcilerPids(next.scope, "repo-sync")).length, 1);
});
