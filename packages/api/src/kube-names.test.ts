import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isDns1123Label, isDns1123Subdomain } from "./kube-names.ts";

void describe("DNS-1123 names", () => {
  void it("accepts lowercase alphanumerics and inner dashes as a label", () => {
    assert.ok(isDns1123Label("root-reconciler"));
    assert.ok(isDns1123Label("a"));
    assert.ok(!isDns1123Label("Root"));
    assert.ok(!isDns1123Label("-a"));
    assert.ok(!isDns1123Label("a.b"));
    assert.ok(!isDns1123Label("a".repeat(64)));
    assert.ok(isDns1123Label("a".repeat(63)));
  });

  void it("accepts dotted labels as a subdomain", () => {
    assert.ok(isDns1123Subdomain("a.b-c.d"));
    assert.ok(!isDns1123Subdomain("a..b"));
    assert.ok(!isDns1123Subdomain(""));
  });
});
