import assert from "node:assert/strict";
import { test } from "node:test";
import { apiServerTimeoutOverride, reconcileTimeoutMsOf } from "./override-timeouts.ts";

test("override.reconcileTimeout: unset and zero are Config Sync's 5 min default, anything else is honoured", () => {
  assert.equal(reconcileTimeoutMsOf(undefined), 300_000);
  assert.equal(reconcileTimeoutMsOf({}), 300_000);
  // Config Sync's GetReconcileTimeout: a zero duration is the default, not a wait of nothing.
  for (const zero of ["0", "0s", "0m0s"]) assert.equal(reconcileTimeoutMsOf({ reconcileTimeout: zero }), 300_000);
  assert.equal(reconcileTimeoutMsOf({ reconcileTimeout: "30s" }), 30_000);
  assert.equal(reconcileTimeoutMsOf({ reconcileTimeout: "1m30s" }), 90_000);
});

test("override.apiServerTimeout: unset and zero leave the default (no override), anything else is passed on as written", () => {
  assert.equal(apiServerTimeoutOverride(undefined), undefined);
  for (const zero of ["0", "0s", "0ms"]) assert.equal(apiServerTimeoutOverride({ apiServerTimeout: zero }), undefined);
  assert.equal(apiServerTimeoutOverride({ apiServerTimeout: "7s" }), "7s");
});
