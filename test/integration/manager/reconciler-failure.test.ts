/**
 * A reconciler that cannot start: the manager puts its own last words on the sync's conditions
 * (Stalled, reason ReconcilerFailed), so `driftless status` and `nomos status` say why, and clears
 * them once it runs.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Finalizer, reconcilerName, SyncLabel } from "@driftless/api";
import type { KubeObject, ResourceMapping } from "@driftless/kube";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { findRepoRoot } from "@driftless/local-cluster";
import { eventually, suffix, testEnv, TestRepo } from "../../support/index.ts";
import { denyByPolicy } from "../../support/admission-policy.ts";
import {
  admin,
  conditionOf,
  configMap,
  createSync,
  getSync,
  Mapping,
  rootSyncObject,
  startManager,
  systemNamespace,
} from "./helpers.ts";

test("a reconciler that keeps exiting puts its reason on the sync's Stalled condition, cleared once it runs", async (t) => {
  const manager = await startManager(t);
  const client = await admin();
  const name = `fails-${suffix()}`;
  const denial = `policy ${name}: this RootSync may not get the reconciler finalizer`;
  // A policy engine that refuses the reconciler's first write: a real, per-sync reason to fail at start.
  const lift = await denyByPolicy(t, name, {
    rule: { apiGroups: ["configsync.gke.io"], apiVersions: ["*"], operations: ["UPDATE"], resources: ["rootsyncs"] },
    when: `object.metadata.name == '${name}' && has(object.metadata.finalizers) && object.metadata.finalizers.exists(f, f == '${Finalizer.Reconciler}')`,
    message: denial,
  });

  const repo = await TestRepo.create(t);
  await repo.write("root/cm.yaml", configMap(`cm-${name}`, systemNamespace, { k: "v" }));
  await repo.commit("one config map");
  // Created outside the manager's scope until the policy is known to be in force.
  const sync = rootSyncObject(name, manager.scope, { repo: repo.url, branch: repo.branch, dir: "root" });
  await createSync(t, { ...sync, metadata: { ...sync.metadata, labels: {} } });
  await eventually(
    async () => {
      const live = await client.get(Mapping.RootSync, systemNamespace, name);
      if (live === undefined) return false;
      const probe = { ...live, metadata: { ...live.metadata, finalizers: [Finalizer.Reconciler] } };
      try {
        await client.replace(Mapping.RootSync, probe, { dryRun: true });
        return false;
      } catch (error) {
        return String(error).includes(denial);
      }
    },
    { what: "the admission policy to be in force" },
  );
  const live = await client.get(Mapping.RootSync, systemNamespace, name);
  assert.ok(live !== undefined);
  await client.replace(Mapping.RootSync, {
    ...live,
    metadata: { ...live.metadata, labels: { ...manager.scope.labels } },
  });

  const stalled = await eventually(
    async () => {
      const current = await getSync("RootSync", systemNamespace, name);
      const condition = conditionOf(current, "Stalled");
      return condition?.status === "True" && condition.reason === "ReconcilerFailed"
        ? { current, condition }
        : undefined;
    },
    { timeoutMs: 60_000, what: "the manager to report the failing reconciler" },
  );
  assert.match(stalled.condition.message ?? "", /failed/);
  assert.ok(
    (stalled.condition.message ?? "").includes(denial),
    `the condition does not carry the reconciler's reason: ${stalled.condition.message}`,
  );
  // `driftless status` shows it, and exits 1. Read while Stalled: between two failures a restarted reconciler
  // that has run for a moment clears the condition (a slow start on a loaded machine), until it fails again.
  const cli = join(findRepoRoot(), "apps", "cli", "src", "main.ts");
  const status = () =>
    promisify(execFile)(process.execPath, [cli, "status", "--kubeconfig", testEnv().kubeconfig]).then(
      (r) => ({ code: 0, stdout: r.stdout }),
      (error: { code?: number; stdout?: string }) => ({ code: error.code, stdout: error.stdout ?? "" }),
    );
  const { run, line } = await eventually(
    async () => {
      const run = await status();
      const line = run.stdout.split("\n").find((l) => l.includes(`/${name} `)) ?? "";
      if (!/STALLED/.test(line)) throw new Error(`driftless status: ${run.stdout}`);
      return { run, line };
    },
    { timeoutMs: 60_000, what: "driftless status to show the sync STALLED" },
  );
  assert.ok(line.includes(denial), `driftless status does not show the reason: ${line}`);
  assert.equal(run.code, 1);

  // The policy goes: the next restart runs, and the condition says so.
  await lift();
  await eventually(
    async () => {
      const condition = conditionOf(await getSync("RootSync", systemNamespace, name), "Stalled");
      return condition?.status === "False";
    },
    { timeoutMs: 120_000, what: "Stalled to clear once the reconciler runs" },
  );
});

test("deployment mode: a reconciler pod refused at creation is reported on the sync's Stalled condition with the server's reason", async (t) => {
  const manager = await startManager(t, { mode: "deployment" });
  const client = await admin();
  const name = `podfails-${suffix()}`;
  const reconciler = reconcilerName("RootSync", systemNamespace, name);
  const denial = `policy ${name}: no pods for ${reconciler}`;
  await denyByPolicy(t, name, {
    rule: { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] },
    when: `has(object.metadata.labels) && '${SyncLabel.DeploymentName}' in object.metadata.labels && object.metadata.labels['${SyncLabel.DeploymentName}'] == '${reconciler}'`,
    message: denial,
  });

  const pods: ResourceMapping = {
    group: "",
    version: "v1",
    kind: "Pod",
    resource: "pods",
    namespaced: true,
    verbs: [],
  };
  await eventually(
    async () => {
      const probe = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
          name: `probe-${name}`,
          namespace: systemNamespace,
          labels: { [SyncLabel.DeploymentName]: reconciler },
        },
        spec: { containers: [{ name: "c", image: "none" }] },
      } as KubeObject;
      try {
        await client.create(pods, probe, { dryRun: true });
        return false;
      } catch (error) {
        return String(error).includes(denial);
      }
    },
    { what: "the admission policy to be in force" },
  );
  await createSync(
    t,
    rootSyncObject(name, manager.scope, { repo: "https://example.invalid/config.git", branch: "main" }),
  );
  const stalled = await eventually(
    async () => {
      const condition = conditionOf(await getSync("RootSync", systemNamespace, name), "Stalled");
      return condition?.status === "True" && condition.reason === "ReconcilerFailed" ? condition : undefined;
    },
    { timeoutMs: 60_000, what: "the manager to report the refused pod" },
  );
  assert.ok((stalled.message ?? "").includes(denial), `no admission reason in: ${stalled.message}`);
  assert.match(stalled.message ?? "", /FailedCreate/);
  // The DriftlessReconcilerFailed alert reads this gauge: a reconciler that cannot run counts as failed.
  await eventually(async () => failedReconcilers(await manager.metrics()) === 1, {
    what: 'driftless_reconcilers{state="failed"} at 1 on the manager',
  });
});

function failedReconcilers(metrics: string): number | undefined {
  const value = /^driftless_reconcilers\{state="failed"\} (\S+)$/m.exec(metrics)?.[1];
  return value === undefined ? undefined : Number(value);
}
