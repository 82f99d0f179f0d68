import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { applyPatch } from "./apply-patch.ts";
import type { JsonObject } from "./json.ts";
import { applyMergePatch, applyStrategicMergePatch } from "./patch-apply.ts";
import { resolveKind } from "./kinds.ts";
import { at, edit, list, maker, withRecord } from "./testdata/harness.ts";
import { declaredPod, livePod } from "./testdata/pod.ts";

describe("strategic merge patches", () => {
  it("removes a finalizer we dropped with $deleteFromPrimitiveList and adds ours by merging", () => {
    const applied = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", finalizers: ["ours/a", "ours/b"] } };
    const declared = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", finalizers: ["ours/a", "ours/c"] } };
    const live = withRecord(
      { ...structuredClone(applied), metadata: { name: "c", finalizers: ["theirs/x", "ours/a", "ours/b"] } },
      applied,
    );
    const result = maker.calculate(live, declared);
    assert.deepEqual(result.patch, {
      metadata: { finalizers: ["ours/c"], "$deleteFromPrimitiveList/finalizers": ["ours/b"] },
    });
    assert.deepEqual((applyPatch(live, result)["metadata"] as JsonObject)["finalizers"], [
      "theirs/x",
      "ours/a",
      "ours/c",
    ]);
  });

  it("switching a volume's source sends $retainKeys so the old source is cleared", () => {
    const declared = edit(declaredPod(), (o) => (at(o, "spec.volumes.0")["emptyDir"] = null));
    at(declared, "spec.volumes.0")["configMap"] = { name: "scratch" };
    const result = maker.calculate(withRecord(livePod(), declaredPod()), declared);
    assert.deepEqual(result.patch, {
      spec: { volumes: [{ name: "scratch", configMap: { name: "scratch" }, $retainKeys: ["configMap", "name"] }] },
    });
    const volume = list(applyPatch(livePod(), result), "spec.volumes")[0];
    assert.deepEqual(volume, { name: "scratch", configMap: { name: "scratch" } });
  });

  it("removing a whole one-of map (Deployment strategy) still sends the removal", async () => {
    const { declaredDeployment, liveDeployment } = await import("./testdata/deployment.ts");
    const applied = edit(declaredDeployment(), (o) => (at(o, "spec")["strategy"] = { type: "Recreate" }));
    const live = withRecord(
      edit(liveDeployment(), (o) => (at(o, "spec")["strategy"] = { type: "Recreate" })),
      applied,
    );
    const result = maker.calculate(live, declaredDeployment());
    assert.deepEqual(result.patch, { spec: { strategy: { type: null } } });
    assert.equal(maker.calculate(applyPatch(live, result), declaredDeployment()).isEmpty(), true);
  });

  it("keeps the tolerations admission added when sending a Pod's changed tolerations", () => {
    const declared = edit(declaredPod(), (o) => list(o, "spec.tolerations").push({ key: "gpu", operator: "Exists" }));
    const result = maker.calculate(withRecord(livePod(), declaredPod()), declared);
    const sent = ((result.patch["spec"] as JsonObject)["tolerations"] as JsonObject[]).map((t) => t["key"]);
    assert.deepEqual(sent, ["dedicated", "gpu", "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]);
  });

  it("adds a whole missing keyed item, merge key first", () => {
    const declared = edit(declaredPod(), (o) => list(o, "spec.containers").push({ name: "tail", image: "busybox" }));
    const result = maker.calculate(withRecord(livePod(), declaredPod()), declared);
    assert.deepEqual(result.patch, { spec: { containers: [{ name: "tail", image: "busybox" }] } });
  });

  it("applies $patch: replace, $setElementOrder and null deletions like the API server", () => {
    const schema = resolveKind("v1", "Pod").schema;
    const out = applyStrategicMergePatch(
      { spec: { containers: [{ name: "a", image: "1" }], nodeSelector: { x: "1" }, dnsPolicy: "ClusterFirst" } },
      {
        spec: {
          "$setElementOrder/containers": [{ name: "a" }],
          containers: [{ name: "a", image: "2" }],
          nodeSelector: { $patch: "replace", y: "2" },
          dnsPolicy: null,
        },
      },
      schema,
    );
    assert.deepEqual(out, { spec: { containers: [{ name: "a", image: "2" }], nodeSelector: { y: "2" } } });
  });
});

describe("merge patches (RFC 7386)", () => {
  it("merges maps, deletes with null and replaces lists", () => {
    assert.deepEqual(applyMergePatch({ a: { b: 1, c: 2 }, l: [1, 2] }, { a: { b: null, d: 3 }, l: [3] }), {
      a: { c: 2, d: 3 },
      l: [3],
    });
    assert.deepEqual(applyMergePatch({ a: 1 }, "x"), "x");
  });
});

describe("empty results", () => {
  it("has an empty patch", () => {
    const result = maker.calculate(withRecord(livePod(), declaredPod()), declaredPod());
    assert.equal(result.isEmpty(), true);
    assert.deepEqual(result.patch, {});
    assert.deepEqual(applyPatch(livePod(), result), livePod());
  });
});
