/**
 * spec.git.period is bounded where the reconciler reads it: `0s` means the 15 s default (as in Config
 * Sync) instead of a poller that refuses to start, and `1ns` polls once a second, not back to back.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createLogger } from "@driftless/sync";
import {
  createRootSync,
  rootSynced,
  rootSyncNamespace,
  startReconciler,
  suffix,
  testNamespace,
  TestRepo,
} from "../../support/index.ts";

for (const [period, expectedMs] of [
  ["0s", 15_000],
  ["1ns", 1_000],
] as const) {
  test(`a RootSync with spec.git.period ${period} starts its reconciler, polls every ${expectedMs / 1000} s and syncs`, async (t) => {
    const namespace = await testNamespace(t, "period");
    const name = `period-${suffix()}`;
    const repo = await TestRepo.create(t);
    await repo.write(
      "config/cm.yaml",
      JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm", namespace }, data: { a: "b" } }),
    );
    const commit = await repo.commit("one config map");
    await createRootSync(name, repo, {
      spec: { git: { repo: repo.url, branch: repo.branch, dir: "config", auth: "none", period } },
    });
    const started: unknown[] = [];
    const log = createLogger(
      {},
      {
        write: (line) => {
          const entry = JSON.parse(line) as { msg?: string; pollPeriodMs?: unknown };
          if (entry.msg === "reconciler started") started.push(entry.pollPeriodMs);
        },
      },
    );
    // No test override: the period comes from the spec, as in production.
    await startReconciler(
      t,
      { kind: "RootSync", namespace: rootSyncNamespace, name },
      { pollPeriodMs: undefined, log },
    );
    assert.deepEqual(started, [expectedMs]);
    await rootSynced(name, commit);
  });
}
