import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isNewer, isOlder, storeKey } from "./store.ts";

void describe("resourceVersion order", () => {
  void it("compares integer resourceVersions numerically, not as strings", () => {
    assert.equal(isNewer("1000", "999"), true);
    assert.equal(isNewer("999", "1000"), false);
    assert.equal(isOlder("999", "1000"), true);
    assert.equal(isOlder("1000", "1000"), false);
    assert.equal(isNewer("1000", "1000"), true, "an equal copy may replace (it is the same state)");
  });

  void it("handles int64 revisions beyond Number's precision", () => {
    assert.equal(isOlder("9007199254740993", "9007199254740994"), true);
    assert.equal(isOlder("9223372036854775807", "10000000000000000000"), true);
  });

  void it("ignores leading zeros", () => {
    assert.equal(isOlder("0099", "100"), true);
    assert.equal(isOlder("0100", "100"), false);
    assert.equal(isNewer("000", "0"), true);
    assert.equal(isOlder("0", "1"), true);
  });

  void it("trusts the later arrival when either is not an integer", () => {
    assert.equal(isNewer("abc", "5"), true);
    assert.equal(isNewer("5", "abc"), true);
    assert.equal(isOlder("abc", "5"), false);
    assert.equal(isNewer(undefined, "5"), true);
  });

  void it("keys by namespace/name, or name alone when cluster-scoped", () => {
    assert.equal(storeKey("ns", "a"), "ns/a");
    assert.equal(storeKey(undefined, "a"), "a");
    assert.equal(storeKey("", "a"), "a");
  });
});
