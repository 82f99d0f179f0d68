import { test } from "node:test";
import assert from "node:assert/strict";
import { errorCodeClass } from "./config-sync.ts";

test("groups KNV codes into Config Sync's families for reconciler_errors", () => {
  assert.equal(errorCodeClass("KNV1021"), "1xxx");
  assert.equal(errorCodeClass("KNV2009"), "2xxx");
  assert.equal(errorCodeClass("KNV9998"), "9xxx");
  assert.equal(errorCodeClass("oops"), "9xxx");
});
