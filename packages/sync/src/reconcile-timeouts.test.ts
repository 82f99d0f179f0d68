import { test } from "node:test";
import assert from "node:assert/strict";
import { HealthStatus, Operation, type ApplyOutcome, type DesiredObject } from "@driftless/applier";
import { ReconcileTimeouts } from "./reconcile-timeouts.ts";

const desired: DesiredObject = {
  id: { group: "apps", kind: "Deployment", namespace: "web", name: "api" },
  apiVersion: "apps/v1",
  object: { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "api", namespace: "web" } },
  sourcePath: "api.yaml",
  sourceHash: "0",
  dependsOn: [],
};
const outcome = (operation: ApplyOutcome["operation"], health: HealthStatus): ApplyOutcome => ({
  desired,
  operation,
  health,
});

test("a timed-out object is reported while it stays unreconciled, without being waited for again", () => {
  const timeouts = new ReconcileTimeouts();
  const written = outcome(Operation.Updated, HealthStatus.InProgress);
  const [first] = timeouts.errors([written], [written], 300_000);
  assert.equal(first?.code, "KNV2009");
  assert.match(
    first?.message ?? "",
    /failed to wait for Deployment\.apps, web\/api: reconcile timeout: not Current within 300 s/,
  );
  // The next pass leaves it unchanged and does not wait: still reported.
  assert.equal(timeouts.errors([outcome(Operation.Unchanged, HealthStatus.InProgress)], [], 300_000).length, 1);
  // Current: forgotten, and not reported again.
  assert.equal(timeouts.errors([outcome(Operation.Unchanged, HealthStatus.Current)], [], 300_000).length, 0);
  assert.equal(timeouts.errors([outcome(Operation.Unchanged, HealthStatus.InProgress)], [], 300_000).length, 0);
});

test("an object that never timed out is not reported, and one no longer declared is forgotten", () => {
  const timeouts = new ReconcileTimeouts();
  assert.equal(timeouts.errors([outcome(Operation.Unchanged, HealthStatus.InProgress)], [], 1_000).length, 0);
  const written = outcome(Operation.Created, HealthStatus.InProgress);
  timeouts.errors([written], [written], 1_000);
  assert.equal(timeouts.errors([], [], 1_000).length, 0);
  assert.equal(timeouts.errors([outcome(Operation.Unchanged, HealthStatus.InProgress)], [], 1_000).length, 0);
});

test("unchanged objects are waited for until a wait has been reported on: what an earlier reconciler timed out on is not known", () => {
  const timeouts = new ReconcileTimeouts();
  assert.equal(timeouts.waitsForUnchanged, true);
  timeouts.errors([outcome(Operation.Unchanged, HealthStatus.Current)], [], 1_000);
  assert.equal(timeouts.waitsForUnchanged, false);
});
