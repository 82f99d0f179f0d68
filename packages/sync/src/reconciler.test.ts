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

  for (const errorClass of [ErrorClass.Retry, ErrorClass.Terminal]) {
    const failed = passLine({
      commit: "abc",
      sourceErrors: [],
      syncErrors: [failure(errorClass)],
      synced: false,
      applied: [],
      pruned: [],
    });
    assert.equal(failed["level"], "error", `a pass with a ${errorClass} error`);
    assert.deepEqual(failed["errors"], [{ code: KnvCode.ApiServer, message: "the API server refused" }]);
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
