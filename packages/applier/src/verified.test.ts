import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { VerifiedMatches } from "./apply.ts";
import type { DesiredObject } from "./desired.ts";

const desired = (name: string, value: string): DesiredObject => ({
  id: { group: "", kind: "ConfigMap", namespace: "ns", name },
  apiVersion: "v1",
  object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "ns" }, data: { value } },
  sourcePath: `${name}.yaml`,
  sourceHash: value,
  dependsOn: [],
});
const live = (name: string, resourceVersion: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "ns", resourceVersion },
});

void describe("VerifiedMatches", () => {
  void it("answers only for the same declaration object against the same live resourceVersion", () => {
    const verified = new VerifiedMatches();
    const a = desired("a", "1");
    verified.record(a, live("a", "10"), "Current");
    assert.equal(verified.lookup(a, "10"), "Current");
    assert.equal(verified.lookup(a, "11"), undefined, "the live object changed");
    assert.equal(verified.lookup(desired("a", "1"), "10"), undefined, "a new declaration, even if equal");
    assert.equal(verified.lookup(a, undefined), undefined, "not cached: nothing to vouch for");
  });

  void it("forgets objects no longer declared", () => {
    const verified = new VerifiedMatches();
    const a = desired("a", "1");
    const b = desired("b", "1");
    verified.record(a, live("a", "10"), "Current");
    verified.record(b, live("b", "12"), "InProgress");
    verified.retain([b]);
    assert.equal(verified.size, 1);
    assert.equal(verified.lookup(a, "10"), undefined);
    assert.equal(verified.lookup(b, "12"), "InProgress");
  });
});
