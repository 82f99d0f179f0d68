import { test } from "node:test";
import assert from "node:assert/strict";
import { DriftlessError, ErrorClass } from "@driftless/api";
import { parseManagerJob, parseReconcileJobData } from "./jobs.ts";

test("parses a reconcile payload, keeping only known fields", () => {
  const data = parseReconcileJobData("q", {
    trigger: "webhook",
    commit: "abc",
    requestedAt: "2025-01-01T00:00:00.000Z",
    extra: 1,
  });
  assert.deepEqual(data, { trigger: "webhook", commit: "abc", requestedAt: "2025-01-01T00:00:00.000Z" });
});

test("a malformed reconcile payload is a terminal error: retrying cannot fix it", () => {
  for (const bad of [
    null,
    "poll",
    [],
    { trigger: "often", requestedAt: "x" },
    { trigger: "poll" },
    { trigger: "poll", requestedAt: "x", reason: 3 },
  ]) {
    assert.throws(
      () => parseReconcileJobData("q", bad),
      (error: unknown) =>
        error instanceof DriftlessError &&
        error.errorClass === ErrorClass.Terminal &&
        error.message.startsWith("queue q:"),
      JSON.stringify(bad),
    );
  }
});

test("parses a manager job's action and sync", () => {
  const parsed = parseManagerJob("manager", "teardown", {
    kind: "RepoSync",
    namespace: "a",
    name: "b",
    trigger: "namespace",
    requestedAt: "t",
  });
  assert.deepEqual(parsed, {
    action: "teardown",
    data: { kind: "RepoSync", namespace: "a", name: "b", trigger: "namespace", requestedAt: "t" },
  });
});

test("refuses a manager job with an unknown action, kind or trigger", () => {
  const data = { kind: "RepoSync", namespace: "a", name: "b", trigger: "watch", requestedAt: "t" };
  assert.throws(() => parseManagerJob("manager", "restart", data), DriftlessError);
  assert.throws(() => parseManagerJob("manager", "ensure", { ...data, kind: "Deployment" }), DriftlessError);
  assert.throws(() => parseManagerJob("manager", "ensure", { ...data, trigger: "cron" }), DriftlessError);
  assert.throws(() => parseManagerJob("manager", "ensure", { ...data, name: 7 }), DriftlessError);
});
