import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { eventually, TestRepo } from "../../support/index.ts";
import { grantRepoSyncReconciler } from "../../support/rbac.ts";
import {
  admin,
  configMap,
  createNamespace,
  createSync,
  reconcilerPids,
  repoSyncObject,
  startManager,
  synced,
  systemNamespace,
  type RunningManager,
} from "./helpers.ts";

async function parentOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  // pid (comm) state ppid ...: comm may contain spaces, so parse after the last ')'.
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

function reconcilerGauge(metrics: string): number {
  return [...metrics.matchAll(/^driftless_reconcilers\{state="[a-z]+"\} (\d+)/gm)].reduce(
    (sum, m) => sum + Number(m[1]),
    0,
  );
}

test("two manager replicas: exactly one acts, and the other takes over when it dies", async (t) => {
  const a = await startManager(t);
  await eventually(() => a.isLeader(), { what: "the first replica leads" });
  const b = await startManager(t, { scope: a.scope });
  const namespaces = [await createNamespace(t, "ha"), await createNamespace(t, "ha")];
  for (const ns of namespaces) await grantRepoSyncReconciler(ns);
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("a", undefined, { v: "1" }));
  const first = await repo.commit("v1");
  for (const ns of namespaces)
    await createSync(t, repoSyncObject(ns, "repo-sync", a.scope, { repo: repo.url, branch: repo.branch }));
  for (const ns of namespaces) await synced("RepoSync", ns, "repo-sync", first);

  assert.equal(a.isLeader(), true);
  assert.equal(b.isLeader(), false, "both replicas lead");
  const pids = await reconcilerPids(a.scope);
  assert.equal(pids.length, 2, "one reconciler per sync, not one per replica");
  for (const pid of pids) assert.equal(await parentOf(pid), a.pid, "a reconciler runs under the standby");
  assert.equal(reconcilerGauge(await b.metrics()), 0, "the standby reports reconcilers");
  assert.equal(reconcilerGauge(await a.metrics()), 2);
  assert.ok(!b.logs.some((l) => l.includes('"reconciler process started"')), "the standby started a reconciler");
  const lease = await (
    await admin()
  ).get(
    { group: "coordination.k8s.io", version: "v1", kind: "Lease", resource: "leases", namespaced: true, verbs: [] },
    systemNamespace,
    a.scope.leaseName,
  );
  assert.ok(lease !== undefined);

  a.process.kill("SIGKILL");
  await a.exited;
  await eventually(() => b.isLeader(), { timeoutMs: 40_000, what: "the standby takes over" });
  let seen = "";
  await eventually(
    async () => {
      const now = await reconcilerPids(a.scope);
      const parents = await Promise.all(now.map((pid) => parentOf(pid)));
      seen = `reconcilers ${JSON.stringify(now)} with parents ${JSON.stringify(parents)}; new leader ${b.pid}`;
      return now.length === 2 && parents.every((parent) => parent === b.pid);
    },
    { timeoutMs: 45_000, what: "the reconcilers running under the new leader" },
  ).catch((error: unknown) => {
    throw new Error(`${String(error)}; last seen: ${seen}; new leader's log: ${b.logs.slice(-15).join("\n")}`);
  });
  await repo.write("cm.yaml", configMap("a", undefined, { v: "2" }));
  const second = await repo.commit("v2");
  for (const ns of namespaces) await synced("RepoSync", ns, "repo-sync", second, 90_000);
});

test("a leader stopped gracefully hands over at once (it releases the lease)", async (t) => {
  const a = await startManager(t);
  await eventually(() => a.isLeader(), { what: "the first replica leads" });
  const b: RunningManager = await startManager(t, { scope: a.scope });
  const stoppedAt = Date.now();
  await a.stop();
  await eventually(() => b.isLeader(), { timeoutMs: 10_000, what: "the standby takes over" });
  t.diagnostic(`handover after ${Date.now() - stoppedAt} ms`);
});
