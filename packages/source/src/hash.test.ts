import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { canonicalJson, contentHash } from "./hash.ts";

void describe("contentHash", () => {
  void it("ignores key order at every level, so reformatting a file is not a change", () => {
    const a = { kind: "ConfigMap", metadata: { name: "c", labels: { x: "1", y: "2" } }, data: { k: "v" } };
    const b = { data: { k: "v" }, metadata: { labels: { y: "2", x: "1" }, name: "c" }, kind: "ConfigMap" };
    assert.equal(canonicalJson(a), canonicalJson(b));
    assert.equal(contentHash(a), contentHash(b));
  });

  void it("changes with any value, and keeps list order significant", () => {
    const base = contentHash({ data: { k: "v" }, list: [1, 2] });
    assert.notEqual(contentHash({ data: { k: "w" }, list: [1, 2] }), base);
    assert.notEqual(contentHash({ data: { k: "v" }, list: [2, 1] }), base);
    assert.notEqual(contentHash({ data: { k: "v" }, list: [1, 2], extra: null }), base);
  });

  void it("is 16 lower-case hex characters", () => {
    assert.match(contentHash({}), /^[0-9a-f]{16}$/);
  });

  void it("writes canonical JSON without whitespace and with escaped keys", () => {
    assert.equal(canonicalJson({ b: [true, null, 1.5], 'a"': "x" }), '{"a\\"":"x","b":[true,null,1.5]}');
  });
});
