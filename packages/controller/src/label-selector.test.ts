import { test } from "node:test";
import assert from "node:assert/strict";
import { parseLabelSelector } from "./label-selector.ts";

test("matches equality, inequality and existence terms like the API server", () => {
  const select = parseLabelSelector("team=a, tier!=db,owner,!legacy");
  assert.equal(select({ team: "a", tier: "web", owner: "x" }), true);
  assert.equal(select({ team: "a", owner: "x" }), true, "!= matches a missing label");
  assert.equal(select({ team: "b", owner: "x" }), false);
  assert.equal(select({ team: "a", tier: "db", owner: "x" }), false);
  assert.equal(select({ team: "a" }), false, "owner must exist");
  assert.equal(select({ team: "a", owner: "x", legacy: "" }), false, "!legacy must be absent");
  assert.equal(select(undefined), false);
});

test("an empty selector selects everything; == is =", () => {
  assert.equal(parseLabelSelector("")({}), true);
  assert.equal(parseLabelSelector("driftless.test/manager==m1")({ "driftless.test/manager": "m1" }), true);
});

test("refuses set-based terms it cannot evaluate", () => {
  assert.throws(() => parseLabelSelector("env in (a,b)"), /unsupported/);
});
