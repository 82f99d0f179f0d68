import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidObjectError } from "./errors.ts";
import { Annotator, LAST_APPLIED_ANNOTATION, PatchMaker } from "./index.ts";
import type { JsonObject, JsonValue } from "./json.ts";
import { declaredSecret, liveSecret } from "./testdata/configmap.ts";
import { declaredDeployment, liveDeployment } from "./testdata/deployment.ts";
import { at, edit, maker, obj, withRecord } from "./testdata/harness.ts";

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

describe("PatchMaker.calculate", () => {
  it("works as the package example shows: record on update, then nothing to do", () => {
    const annotator = new Annotator();
    const patchMaker = new PatchMaker(annotator);
    const declared = edit(declaredDeployment(), (o) => (at(o, "spec")["replicas"] = 4));
    const live = withRecord(liveDeployment(), declaredDeployment());
    const result = patchMaker.calculate(live, declared);
    assert.equal(result.isEmpty(), false);
    annotator.setLastAppliedAnnotation(declared);
    // What the API server returns after the update: the declaration, defaulted, with the new record.
    const updated = edit(liveDeployment(), (o) => {
      at(o, "spec")["replicas"] = 4;
      at(o, "metadata.annotations")[LAST_APPLIED_ANNOTATION] =
        obj(obj(declared, "metadata"), "annotations")[LAST_APPLIED_ANNOTATION] ?? null;
    });
    assert.equal(patchMaker.calculate(updated, declared).isEmpty(), true);
  });

  it("ignores our own annotation on the declaration and kubectl's on the live object", () => {
    const declared = declaredDeployment();
    new Annotator().setLastAppliedAnnotation(declared);
    const live = edit(withRecord(liveDeployment(), declaredDeployment()), (o) => {
      at(o, "metadata.annotations")["kubectl.kubernetes.io/last-applied-configuration"] = '{"spec":{"paused":true}}';
    });
    assert.equal(maker.calculate(live, declared).isEmpty(), true);
  });

  it("never modifies its inputs (frozen objects are fine)", () => {
    const live = deepFreeze(withRecord(liveDeployment(), declaredDeployment()));
    const declared = deepFreeze(edit(declaredDeployment(), (o) => (at(o, "spec")["replicas"] = 9)));
    const result = maker.calculate(live, declared);
    assert.equal(result.isEmpty(), false);
    assert.ok(result.patch);
    assert.ok(result.current);
  });

  it("asks to create everything when the live object is empty", () => {
    const result = maker.calculate({}, declaredDeployment());
    assert.equal(result.isEmpty(), false);
    assert.deepEqual(Object.keys(result.patch).sort(), ["metadata", "spec"]);
  });

  it("exposes the normalised inputs for logging", () => {
    const result = maker.calculate(withRecord(liveDeployment(), declaredDeployment()), declaredDeployment());
    assert.equal(JSON.stringify(result.modified).includes("creationTimestamp"), false);
    assert.equal(result.current["status"], undefined);
    assert.equal(obj(result.current, "metadata")["uid"], undefined);
    assert.deepEqual(result.original, result.modified);
    assert.ok(Object.isFrozen(result.original));
  });

  it("redacts Secret values when serialised for logs", () => {
    const live = withRecord(
      edit(liveSecret(), (o) => (obj(o, "data")["password"] = "b2xk")),
      declaredSecret(),
    );
    const text = JSON.stringify(maker.calculate(live, declaredSecret()));
    assert.ok(!text.includes("b2xk") && !text.includes("czNjcjN0LXBhc3N3MHJk"), text);
    const parsed = JSON.parse(text) as Record<string, JsonValue>;
    assert.deepEqual(parsed["changes"], ['~ data.password: "<redacted>" -> "<redacted>"']);
  });

  it("rejects inputs that are not objects with a typed error", () => {
    const bad: unknown[] = [null, [], "x", 1];
    for (const value of bad) {
      assert.throws(() => maker.calculate(value as JsonObject, declaredDeployment()), InvalidObjectError);
      assert.throws(() => maker.calculate(liveDeployment(), value as JsonObject), InvalidObjectError);
    }
  });

  it("uses the annotation key of its annotator", () => {
    const annotator = new Annotator("example.com/applied");
    const applied = edit(declaredDeployment(), (o) => (at(o, "metadata.labels")["tier"] = "web"));
    const sent = structuredClone(applied);
    annotator.setLastAppliedAnnotation(sent);
    const live = edit(liveDeployment(), (o) => {
      at(o, "metadata.labels")["tier"] = "web";
      at(o, "metadata.annotations")["example.com/applied"] =
        obj(obj(sent, "metadata"), "annotations")["example.com/applied"] ?? null;
    });
    const result = new PatchMaker(annotator).calculate(live, declaredDeployment());
    assert.deepEqual(result.patch, { metadata: { labels: { tier: null } } });
  });
});
