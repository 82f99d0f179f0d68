/**
 * Leader election is fenced: a leader frozen (SIGSTOP) in the middle of a job, past its lease,
 * while the standby takes over, must write nothing once it is thawed. Each replica reaches the API
 * server through its own recording proxy, so every write is attributed to the replica that made it
 * and timed as it arrived (both run as the same ServiceAccount, with the same user agent).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";
import { eventually, TestRepo } from "../../support/index.ts";
import { configMap, createSync, newScope, rootSyncObject, startManager, systemNamespace } from "./helpers.ts";
import { startRecordingProxy, type ProxiedRequest } from "./recording-proxy.ts";

const leaseMs = 15_000;
const renewDeadlineMs = 10_000;

const byManager = (r: ProxiedRequest): boolean => r.userAgent.startsWith("driftless-manager/");
const isWrite = (r: ProxiedRequest): boolean => r.method !== "GET" && r.method !== "HEAD";

interface LogLine {
  readonly at: number;
  readonly msg: string;
}

function logLines(logs: readonly string[]): LogLine[] {
  const lines: LogLine[] = [];
  for (const line of logs) {
    try {
      const entry = JSON.parse(line) as { time?: string; msg?: string };
      if (entry.time !== undefined && entry.msg !== undefined)
        lines.push({ at: Date.parse(entry.time), msg: entry.msg });
    } catch {
      // not JSON
    }
  }
  return lines;
}

test("a leader frozen mid-job past its lease stops acting before the standby takes over, and writes nothing once thawed", async (t) => {
  const scope = await newScope(t);
  const proxyA = await startRecordingProxy(t, scope.stateDir, "a");
  const proxyB = await startRecordingProxy(t, scope.stateDir, "b");
  const a = await startManager(t, {
    scope,
    extraArgs: ["--kubeconfig", proxyA.kubeconfig, "--identity", `${scope.id}-a`],
  });
  await eventually(() => a.isLeader(), { what: "the first replica leads" });
  const b = await startManager(t, {
    scope,
    extraArgs: ["--kubeconfig", proxyB.kubeconfig, "--identity", `${scope.id}-b`],
  });
  // After the managers' own cleanup (hooks run in order): the survivor tears the sync down through its proxy.
  t.after(() => {
    proxyA.close();
    proxyB.close();
  });
  const leases = `/apis/coordination.k8s.io/v1/namespaces/${systemNamespace}/leases`;
  const isLease = (r: ProxiedRequest): boolean => r.path.startsWith(leases);

  const repo = await TestRepo.create(t);
  await repo.write("root/cm.yaml", configMap("fenced", "default", { v: "1" }));
  await repo.commit("v1");
  const name = `fenced-${scope.id}`;
  // Frozen at its first write for the new sync (the finalizer): the job has its reconciler still to set up.
  let stoppedAt = 0;
  let continuedAt = 0;
  proxyA.onRequest = (r) => {
    if (stoppedAt === 0 && byManager(r) && isWrite(r) && r.path.includes(`/rootsyncs/${name}`)) {
      a.process.kill("SIGSTOP");
      stoppedAt = r.at;
    }
  };
  try {
    await createSync(t, rootSyncObject(name, scope, { repo: repo.url, branch: repo.branch, dir: "root" }));
    await eventually(() => stoppedAt > 0, { what: "the leader's first write for the new sync" });
    await eventually(() => b.isLeader(), { timeoutMs: 40_000, what: "the standby takes over" });
    await eventually(() => b.logs.some((l) => l.includes('"reconciler process started"')), {
      timeoutMs: 60_000,
      what: "the new leader starts the sync's reconciler",
    });
    continuedAt = Date.now();
    a.process.kill("SIGCONT");
  } finally {
    if (continuedAt === 0) a.process.kill("SIGCONT");
  }
  const exit = await Promise.race([a.exited, delay(60_000).then(() => "still running 60 s after the thaw")]);
  await delay(500); // the last requests' answers

  const writesA = proxyA.requests.filter((r) => byManager(r) && isWrite(r));
  const writesB = proxyB.requests.filter((r) => byManager(r) && isWrite(r));
  const show = (rs: readonly ProxiedRequest[]): string[] =>
    rs.map((r) => `${r.method} ${r.path} (${r.status ?? "no answer"}) ${r.at - continuedAt} ms after the thaw`);

  // The thawed leader steps down without writing anything: no job step, token, status or Lease.
  assert.deepEqual(show(writesA.filter((r) => r.at >= continuedAt)), [], "the old leader wrote after it was thawed");
  const linesA = logLines(a.logs);
  assert.deepEqual(
    linesA.filter((l) => l.at >= continuedAt && l.msg === "reconciler process started"),
    [],
    "the old leader started a reconciler after it was thawed",
  );
  const lost = linesA.find((l) => l.at >= continuedAt && l.msg === "lost the leader lease");
  assert.ok(lost !== undefined, `the old leader did not step down: ${a.logs.slice(-10).join("\n")}`);
  assert.equal(exit, 1, "the old leader exits, to come back as a standby");

  // No overlap: every act of the old leader precedes the new leader's first.
  const actsA = writesA.filter((r) => !isLease(r));
  const actsB = writesB.filter((r) => !isLease(r));
  assert.ok(actsA.length > 0 && actsB.length > 0, "both replicas acted");
  const lastActA = Math.max(...actsA.map((r) => r.at));
  const firstActB = Math.min(...actsB.map((r) => r.at));
  assert.ok(lastActA < firstActB, `the old leader acted ${lastActA - firstActB} ms after the new one began`);

  // The bounds: the old leader's writes stop by its renew deadline, the standby acquires after the lease.
  // Acquiring counts as a renewal: the replica may have been frozen before its first.
  const renewals = writesA.filter((r) => isLease(r) && r.status !== undefined && r.status < 300 && r.at <= stoppedAt);
  const lastRenewal = renewals.at(-1);
  const acquired = writesB.find((r) => isLease(r) && r.status !== undefined && r.status < 300);
  assert.ok(
    lastRenewal !== undefined && acquired !== undefined,
    `lease writes: A ${show(writesA.filter(isLease)).join("; ")}; B ${show(writesB.filter(isLease)).join("; ")}`,
  );
  const sinceRenewal = acquired.at - lastRenewal.at;
  assert.ok(sinceRenewal >= leaseMs - 100, `the standby acquired ${sinceRenewal} ms after the last renewal`);
  t.diagnostic(
    `old leader: last renewal ${stoppedAt - lastRenewal.at} ms before the freeze, fenced from ${renewDeadlineMs} ms after it; ` +
      `standby acquired ${sinceRenewal} ms after it (margin ${sinceRenewal - renewDeadlineMs} ms), ` +
      `first wrote ${firstActB - acquired.at} ms after acquiring; ` +
      `thawed after ${continuedAt - stoppedAt} ms, stepped down ${lost.at - continuedAt} ms after the thaw`,
  );
});
