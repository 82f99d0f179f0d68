/**
 * No herd when a manager (re)starts with many syncs: its reconcilers start a few at a time, not all
 * in the same second. A manager started over 30 existing RepoSyncs (what a restart finds) has at
 * most --max-concurrent-starts reconcilers between spawn (its "reconciler process started" line)
 * and up (the reconciler's own "reconciler started" line) at any moment, and every one gets up.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { reconcilerName } from "@driftless/api";
import { eventually, suffix } from "../../support/index.ts";
import { admin, Mapping, newScope, repoSyncObject, startManager } from "./helpers.ts";

// 30 keeps the suite within its per-test deadline (each reconciler is a process); the density bench runs 100.
const syncs = Number(process.env["DRIFTLESS_TEST_SPREAD_SYNCS"] ?? 30);
const limit = 4;

const timeOf = (line: string): number => Date.parse((JSON.parse(line) as { time: string }).time);

test(`a manager starting over ${syncs} RepoSyncs starts their reconcilers at most ${limit} at a time`, async (t) => {
  const client = await admin();
  const scope = await newScope(t);
  const namespaces = Array.from({ length: syncs }, (_, i) => `spread-${i}-${suffix()}`);
  t.after(async () => {
    for (const ns of namespaces) await client.delete(Mapping.Namespace, undefined, ns).catch(() => undefined);
  });
  // Every sync exists before the manager starts, as after a restart. Their repository does not
  // exist: each reconciler starts, reports the fetch error and waits, which is all this measures.
  for (const ns of namespaces) {
    await client.create(Mapping.Namespace, {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: ns, labels: { "driftless.test/run": "true" } },
    });
    await client.create(
      Mapping.RepoSync,
      repoSyncObject(ns, "repo-sync", scope, { repo: "file:///nonexistent/spread.git", branch: "main", period: "60s" }),
    );
  }
  const manager = await startManager(t, { scope, extraArgs: ["--max-concurrent-starts", String(limit)] });

  const upTimes = new Map<string, number>();
  await eventually(
    async () => {
      for (const ns of namespaces) {
        const name = reconcilerName("RepoSync", ns, "repo-sync");
        if (upTimes.has(name)) continue;
        const log = await readFile(join(scope.stateDir, name, "reconciler.log"), "utf8").catch(() => "");
        const line = log.split("\n").find((l) => l.includes('"reconciler started"'));
        if (line !== undefined) upTimes.set(name, timeOf(line));
      }
      return upTimes.size === syncs ? true : undefined;
    },
    { timeoutMs: 600_000, intervalMs: 500, what: `all ${syncs} reconcilers up` },
  );
  const spawnTimes = new Map<string, number>();
  for (const line of manager.logs) {
    if (!line.includes('"reconciler process started"')) continue;
    const entry = JSON.parse(line) as { reconciler: string };
    if (!spawnTimes.has(entry.reconciler)) spawnTimes.set(entry.reconciler, timeOf(line));
  }
  assert.equal(spawnTimes.size, syncs, "the manager logged a start for every reconciler");
  // +1 at a spawn, -1 once up; at equal times the -1 first (a freed slot is taken at once).
  const events = [
    ...[...spawnTimes.values()].map((at) => ({ at, delta: 1 })),
    ...[...upTimes.values()].map((at) => ({ at, delta: -1 })),
  ].sort((a, b) => a.at - b.at || a.delta - b.delta);
  let starting = 0;
  let most = 0;
  for (const e of events) most = Math.max(most, (starting += e.delta));
  const spawns = [...spawnTimes.values()];
  t.diagnostic(
    `starts spread over ${((Math.max(...spawns) - Math.min(...spawns)) / 1000).toFixed(1)} s; at most ${most} starting at once`,
  );
  assert.ok(most <= limit, `at most ${limit} reconcilers starting at once, saw ${most}`);
});
