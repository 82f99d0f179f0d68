import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { LastAppliedTooLargeError, LastAppliedUnreadableError } from "./errors.ts";
import { isObject } from "./json.ts";
import type { JsonObject } from "./json.ts";
import {
  ANNOTATIONS_SIZE_LIMIT_BYTES,
  Annotator,
  COMPRESSED_RECORD_PREFIX,
  COMPRESS_FROM_BYTES,
  DIGEST_VALUES_FROM_BYTES,
  LAST_APPLIED_ANNOTATION,
} from "./last-applied.ts";
import { PatchMaker } from "./patch-maker.ts";
import { declaredDeployment, liveDeployment } from "./testdata/deployment.ts";

function annotation(obj: JsonObject, key = LAST_APPLIED_ANNOTATION): unknown {
  const metadata = obj["metadata"];
  const annotations = isObject(metadata) ? metadata["annotations"] : undefined;
  return isObject(annotations) ? annotations[key] : undefined;
}

describe("last-applied record", () => {
  it("uses our own annotation key by default, never kubectl's", () => {
    assert.equal(new Annotator().annotationKey, LAST_APPLIED_ANNOTATION);
    assert.notEqual(LAST_APPLIED_ANNOTATION, "kubectl.kubernetes.io/last-applied-configuration");
    const obj = declaredDeployment();
    new Annotator().setLastAppliedAnnotation(obj);
    assert.equal(annotation(obj, "kubectl.kubernetes.io/last-applied-configuration"), undefined);
  });

  it("stores a compressed record that reads back as the declaration, without the annotation itself", () => {
    const annotator = new Annotator();
    const obj: JsonObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c", namespace: "shop", labels: { app: "web" }, annotations: { note: "kept" } },
      data: { a: "1", empty: "" },
    };
    // Many short values: each is kept whole (a value over DIGEST_VALUES_FROM_BYTES would be a digest).
    for (let i = 0; i < 40; i++) (obj["data"] as JsonObject)[`line-${i}`] = `echo hello ${i}; `.repeat(8);
    const declared = structuredClone(obj);
    annotator.setLastAppliedAnnotation(obj);
    const value = annotation(obj);
    assert.ok(typeof value === "string" && value.startsWith(COMPRESSED_RECORD_PREFIX));
    assert.ok(value.length < COMPRESS_FROM_BYTES, `compressed to ${value.length} characters`);
    assert.deepEqual(annotator.getOriginalConfiguration(obj), declared);
  });

  it("stores a record shorter than COMPRESS_FROM_BYTES as canonical JSON, deterministically", () => {
    const annotator = new Annotator();
    const make = (): JsonObject => ({
      kind: "ConfigMap",
      apiVersion: "v1",
      data: { b: "2", a: "1" },
      metadata: { namespace: "shop", name: "c" },
    });
    const first = make();
    annotator.setLastAppliedAnnotation(first);
    const value = annotation(first);
    assert.equal(
      value,
      '{"apiVersion":"v1","data":{"a":"1","b":"2"},"kind":"ConfigMap","metadata":{"name":"c","namespace":"shop"}}',
    );
    const second = make();
    annotator.setLastAppliedAnnotation(second);
    assert.equal(annotation(second), value);
    assert.deepEqual(annotator.getOriginalConfiguration(first), make());
  });

  it("leaves server-owned metadata out of the record", () => {
    const annotator = new Annotator();
    const obj = declaredDeployment();
    Object.assign(obj["metadata"] as JsonObject, { uid: "u", resourceVersion: "9", managedFields: [] });
    annotator.setLastAppliedAnnotation(obj);
    const metadata = annotator.getOriginalConfiguration(obj)?.["metadata"] as JsonObject;
    assert.deepEqual(Object.keys(metadata).sort(), ["labels", "name", "namespace"]);
  });

  it("is deterministic: the same declaration in any key order gives the same bytes", () => {
    const a = declaredDeployment();
    const b = JSON.parse(
      JSON.stringify(declaredDeployment(), Object.keys(declaredDeployment()).reverse()),
    ) as JsonObject;
    const shuffled: JsonObject = {};
    for (const key of Object.keys(a).reverse()) shuffled[key] = a[key] ?? null;
    const annotator = new Annotator();
    assert.equal(annotator.encodeRecord(a), annotator.encodeRecord(shuffled));
    assert.equal(annotator.encodeRecord(a), new Annotator().encodeRecord(declaredDeployment()));
    assert.ok(b);
  });

  it("re-recording an object that already carries a record gives the same value", () => {
    const annotator = new Annotator();
    const obj = declaredDeployment();
    annotator.setLastAppliedAnnotation(obj);
    const first = annotation(obj);
    annotator.setLastAppliedAnnotation(obj);
    assert.equal(annotation(obj), first);
  });

  it("reads older plain-JSON records", () => {
    const annotator = new Annotator();
    const obj = liveDeployment();
    (obj["metadata"] as JsonObject)["annotations"] = {
      [LAST_APPLIED_ANNOTATION]: JSON.stringify({ spec: { replicas: 2 } }),
    };
    assert.deepEqual(annotator.getOriginalConfiguration(obj), { spec: { replicas: 2 } });
  });

  it("returns undefined when there is no record", () => {
    assert.equal(new Annotator().getOriginalConfiguration(liveDeployment()), undefined);
    assert.equal(new Annotator().getOriginalConfiguration({}), undefined);
  });

  it("raises a typed error for an unreadable record, and the matcher asks for an update instead", () => {
    const annotator = new Annotator();
    const obj = liveDeployment();
    (obj["metadata"] as JsonObject)["annotations"] = { [LAST_APPLIED_ANNOTATION]: "br64:not brotli" };
    assert.throws(
      () => annotator.getOriginalConfiguration(obj),
      (err: unknown) => {
        assert.ok(err instanceof LastAppliedUnreadableError);
        assert.equal(err.code, "KNV2009");
        return true;
      },
    );
    const result = new PatchMaker(annotator).calculate(obj, declaredDeployment());
    assert.equal(result.isEmpty(), false);
    assert.equal(result.changes[0]?.op, "record");
  });

  it("records Secret values as digests, never the values", () => {
    const annotator = new Annotator();
    const secret: JsonObject = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s" },
      stringData: { password: "hunter2" },
    };
    annotator.setLastAppliedAnnotation(secret);
    const original = annotator.getOriginalConfiguration(secret);
    const text = JSON.stringify(original);
    assert.ok(!text.includes("hunter2") && !text.includes(Buffer.from("hunter2").toString("base64")));
    assert.match(String((original?.["stringData"] as JsonObject)["password"]), /^sha256:[0-9a-f]{64}$/);
  });

  it("compresses large objects to fit the 256 KiB annotation budget", () => {
    const data: JsonObject = {};
    for (let i = 0; i < 6000; i++) data[`key-${i}`] = `value number ${i} of a large but repetitive configuration`;
    const cm: JsonObject = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "big" }, data };
    assert.ok(JSON.stringify(cm).length > ANNOTATIONS_SIZE_LIMIT_BYTES);
    new Annotator().setLastAppliedAnnotation(cm);
    assert.ok(String(annotation(cm)).length < ANNOTATIONS_SIZE_LIMIT_BYTES);
  });

  it("raises LastAppliedTooLargeError when even the record with every value digested does not fit", () => {
    // 1,500 random values of 64 characters, each shorter than its digest (nothing shrinks them), beside a
    // 200 KiB annotation (recorded as a digest, yet counted whole against the budget).
    const data: JsonObject = {};
    for (let i = 0; i < 1500; i++) data[`key-${i}`] = randomBytes(48).toString("base64");
    const annotations = { big: "x".repeat(200 * 1024) };
    const cm: JsonObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "huge", namespace: "shop", annotations },
      data,
    };
    assert.throws(
      () => new Annotator().setLastAppliedAnnotation(cm),
      (err: unknown) => {
        assert.ok(err instanceof LastAppliedTooLargeError);
        assert.equal(err.code, "KNV2009");
        assert.equal(err.reason, "LastAppliedTooLarge");
        assert.equal(err.errorClass, "terminal");
        assert.ok(err.annotationsBytes > ANNOTATIONS_SIZE_LIMIT_BYTES);
        assert.match(err.message, /ConfigMap shop\/huge is too large/);
        return true;
      },
    );
    assert.equal(annotation(cm), undefined, "the object is left untouched");
    delete (cm["metadata"] as JsonObject)["annotations"];
    new Annotator().setLastAppliedAnnotation(cm); // alone, the same data fits
  });

  it("records a string value over DIGEST_VALUES_FROM_BYTES as its digest: 900 KiB of random base64 fits", () => {
    const blob = randomBytes(680 * 1024).toString("base64");
    const long = "x".repeat(DIGEST_VALUES_FROM_BYTES + 1);
    const edge = "é".repeat(DIGEST_VALUES_FROM_BYTES / 2); // 128 characters, exactly 256 bytes: kept
    const cm: JsonObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "big", namespace: "shop", annotations: { note: long, short: "kept" } },
      data: { long, edge, short: "1" },
      binaryData: { blob },
    };
    assert.ok(blob.length > 900 * 1024);
    const annotator = new Annotator();
    annotator.setLastAppliedAnnotation(cm);
    const value = String(annotation(cm));
    assert.ok(value.length < 2048, `recorded in ${value.length} characters`);
    const record = annotator.getOriginalConfiguration(cm);
    const digest = (text: string): string => `sha256:${createHash("sha256").update(text).digest("hex")}`;
    assert.deepEqual(record, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "big", namespace: "shop", annotations: { note: digest(long), short: "kept" } },
      data: { long: digest(long), edge, short: "1" },
      binaryData: { blob: digest(blob) },
    });
  });

  it("records a ConfigMap whose own annotations take 150 KiB", () => {
    const annotations: JsonObject = {};
    for (let i = 0; i < 150; i++) annotations[`example.com/note-${i}`] = randomBytes(768).toString("base64");
    const cm: JsonObject = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "noted", annotations } };
    new Annotator().setLastAppliedAnnotation(cm);
    assert.ok(String(annotation(cm)).length < 16 * 1024);
  });

  it("digests every value longer than a digest when the record would not fit otherwise", () => {
    // 700 random annotations of 200 bytes (140 KiB): under DIGEST_VALUES_FROM_BYTES, yet too many to copy.
    const annotations: JsonObject = {};
    for (let i = 0; i < 700; i++) annotations[`n${i}`] = randomBytes(150).toString("base64");
    const name = "n".repeat(100);
    const cm: JsonObject = { apiVersion: "v1", kind: "ConfigMap", metadata: { name, annotations }, data: { a: "b" } };
    const annotator = new Annotator();
    annotator.setLastAppliedAnnotation(cm);
    const record = annotator.getOriginalConfiguration(cm);
    const metadata = record?.["metadata"] as JsonObject;
    assert.equal(metadata["name"], name, "names are kept whatever their length");
    assert.match(String((metadata["annotations"] as JsonObject)["n0"]), /^sha256:[0-9a-f]{64}$/);
    assert.deepEqual(record?.["data"], { a: "b" });
    // The same values on a small object stay whole: the last resort is only taken when needed.
    const small: JsonObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "s" },
      data: { v: "y".repeat(200) },
    };
    assert.deepEqual(annotator.recordOf(small)["data"], { v: "y".repeat(200) });
  });

  it("keeps values inside lists whole: merge keys and set members are matched by value", () => {
    const script = "echo start; ".repeat(64);
    const deployment = declaredDeployment();
    const container = ((deployment["spec"] as JsonObject)["template"] as JsonObject)["spec"] as JsonObject;
    (container["containers"] as JsonObject[])[0]!["command"] = ["sh", "-c", script];
    const record = new Annotator().recordOf(deployment);
    assert.ok(JSON.stringify(record).includes(JSON.stringify(script)));
  });

  it("counts the object's other annotations against the budget", () => {
    const cm: JsonObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "x", annotations: { big: "x".repeat(ANNOTATIONS_SIZE_LIMIT_BYTES - 100) } },
      data: { a: "b" },
    };
    assert.throws(() => new Annotator().setLastAppliedAnnotation(cm), LastAppliedTooLargeError);
  });

  it("supports another key, and removes its record on request", () => {
    const annotator = new Annotator("example.com/applied");
    const obj = declaredDeployment();
    annotator.setLastAppliedAnnotation(obj);
    assert.equal(annotation(obj), undefined);
    assert.ok(annotator.getOriginalConfiguration(obj));
    assert.equal(annotator.removeLastAppliedAnnotation(obj), true);
    assert.equal(annotator.getOriginalConfiguration(obj), undefined);
  });

  it("hands out copies: changing a returned original does not change later reads", () => {
    const annotator = new Annotator();
    const obj = declaredDeployment();
    annotator.setLastAppliedAnnotation(obj);
    const first = annotator.getOriginalConfiguration(obj);
    assert.ok(first);
    first["spec"] = null;
    assert.ok(isObject(annotator.getOriginalConfiguration(obj)?.["spec"]));
  });
});
