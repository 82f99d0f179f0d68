import assert from "node:assert/strict";
import { it } from "node:test";
import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import { createMetrics } from "@driftless/metrics";
import { createLogger } from "./log.ts";
import type { PassResult } from "./pass.ts";
import { Reconciler } from "./reconciler.ts";

/** The pass log line of `result`, as a Reconciler writes it (one without a cluster: observePass needs none). */
function passLine(result: PassResult): Record<string, unknown> {
  const lines: string[] = [];
  const reconciler = Object.assign(Object.create(Reconciler.prototype) as Reconciler, {
    identity: { kind: "RootSync", namespace: "config-management-system", name: "root-sync" },
    log: createLogger({}, { level: "debug", write: (line) => void lines.push(line) }),
    metrics: createMetrics({ processMetrics: false }),
  });
  Object.assign(reconciler, { parts: {} }); // no watch caches: nothing left out to report
  reconciler.observePass("poll", result, 0.25);
  const finished = lines
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((l) => l["msg"] === "pass finished");
  assert.equal(finished.length, 1, lines.join(""));
  return finished[0] ?? {};
}

const failure = (errorClass: ErrorClass): DriftlessError =>
  new DriftlessError({ code: KnvCode.ApiServer, errorClass, message: "the API server refused" });

void it("logs a pass that reports an error at error level, as Config Sync logs each failed attempt; a clean one at info", () => {
  const clean = passLine({ commit: "abc", sourceErrors: [], syncErrors: [], synced: true, applied: [], pruned: [] });
  assert.equal(clean["level"], "info");

  // Errors that all pass by themselves (retried) at warn; any other at error.
  for (const [classes, level] of [
    [[ErrorClass.Retry], "warn"],
    [[ErrorClass.Terminal], "error"],
    [[ErrorClass.Retry, ErrorClass.Terminal], "error"],
  ] as const) {
    const failed = passLine({
      commit: "abc",
      sourceErrors: [],
      syncErrors: classes.map(failure),
      synced: false,
      applied: [],
      pruned: [],
    });
    assert.equal(failed["level"], level, `a pass with ${classes.join(", ")} errors`);
    assert.deepEqual(
      failed["errors"],
      classes.map(() => ({ code: KnvCode.ApiServer, message: "the API server refused" })),
    );
  }
  const badSource = passLine({
    commit: "abc",
    sourceErrors: [failure(ErrorClass.Terminal)],
    syncErrors: [],
    synced: false,
    applied: [],
    pruned: [],
  });
  assert.equal(badSource["level"], "error");
});

/** A Reconciler whose last complete pass synced `revision` at generation 3 just now (one without a cluster). */
function afterCompletePass(revision: string): Reconciler {
  return Object.assign(Object.create(Reconciler.prototype) as Reconciler, {
    options: {},
    passAsked: false,
    lastComplete: { revision, generation: 3, at: Date.now() },
  });
}

void it("skips a webhook pass as a poll when the revision and generation are the last complete pass's; every other trigger, or any change, runs in full", () => {
  const skips = (trigger: string, revision = "r1", generation = 3): boolean =>
    afterCompletePass("r1").beginCommit(trigger, revision, generation);
  assert.equal(skips("poll"), true);
  assert.equal(skips("webhook"), true, "a replayed push for the synced commit");
  for (const trigger of ["drift", "manager", "startup", "retry"])
    assert.equal(skips(trigger), false, `a ${trigger} pass runs in full`);
  assert.equal(skips("webhook", "r2"), false, "a push of a new commit");
  assert.equal(skips("webhook", "r1", 4), false, "a changed spec");

  // A pass the reconciler asked for (drift, a values ConfigMap) and the queue folded into a webhook job.
  const asked = afterCompletePass("r1");
  Object.assign(asked, { passAsked: true });
  assert.equal(asked.beginCommit("webhook", "r1", 3), false);
});
