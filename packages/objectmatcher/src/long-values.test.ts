/**
 * The record keeps a digest of every long value; the three-way match must decide exactly as it did
 * with full values, and read records written with full values (before the digests) without a write.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { brotliCompressSync } from "node:zlib";
import { describe, it } from "node:test";
import { ChangeOp, formatPath } from "./changes.ts";
import { canonicalJson, isObject } from "./json.ts";
import type { JsonObject } from "./json.ts";
import { COMPRESSED_RECORD_PREFIX, DIGEST_VALUES_FROM_BYTES, LAST_APPLIED_ANNOTATION } from "./last-applied.ts";
import { annotator, maker, withRecord } from "./testdata/harness.ts";

const long = (): string => randomBytes(DIGEST_VALUES_FROM_BYTES).toString("base64");

function declared(data: JsonObject, annotations: JsonObject = {}): JsonObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "big", namespace: "shop", annotations },
    data,
  };
}

/** The object as the server returns it after `applied` was written, with `record` as its annotation. */
function live(applied: JsonObject, record?: string): JsonObject {
  const current = structuredClone(applied);
  Object.assign(current["metadata"] as JsonObject, { uid: "u1", resourceVersion: "7" });
  if (record === undefined) return withRecord(current, applied);
  const metadata = current["metadata"] as JsonObject;
  metadata["annotations"] = { ...(metadata["annotations"] as JsonObject), [LAST_APPLIED_ANNOTATION]: record };
  return current;
}

/** A record as the code before digests wrote it: every value whole, compressed or not. */
function fullValueRecord(applied: JsonObject, compressed: boolean): string {
  const json = canonicalJson(applied);
  if (!compressed) return json;
  return COMPRESSED_RECORD_PREFIX + brotliCompressSync(Buffer.from(json)).toString("base64");
}

function paths(current: JsonObject, modified: JsonObject): string[] {
  return maker.calculate(current, modified).changes.map((change) => `${change.op} ${formatPath(change.path)}`);
}

describe("long values recorded as digests", () => {
  const a = long();
  const b = long();
  const note = long();
  const applied = declared({ a, b, short: "1" }, { note });

  it("the record holds their digests", () => {
    const record = annotator.getOriginalConfiguration(live(applied));
    const data = record?.["data"] as JsonObject;
    assert.match(String(data["a"]), /^sha256:/);
    assert.equal(data["short"], "1");
  });

  it("an idle pass finds nothing to write", () => {
    assert.deepEqual(paths(live(applied), applied), []);
  });

  it("a value changed in Git is written", () => {
    const changed = declared({ a: long(), b, short: "1" }, { note: long() });
    assert.deepEqual(paths(live(applied), changed), [
      `${ChangeOp.Change} data.a`,
      `${ChangeOp.Change} metadata.annotations.note`,
    ]);
  });

  it("a value changed live is corrected", () => {
    const current = live(applied);
    (current["data"] as JsonObject)["b"] = long();
    assert.deepEqual(paths(current, applied), [`${ChangeOp.Change} data.b`]);
  });

  it("a key removed from Git is removed live; another actor's long value is left alone", () => {
    const current = live(applied);
    (current["data"] as JsonObject)["theirs"] = long();
    const dropped = declared({ b, short: "1" }, {});
    assert.deepEqual(paths(current, dropped), [
      `${ChangeOp.Remove} data.a`,
      `${ChangeOp.Remove} metadata.annotations.note`,
    ]);
    const result = maker.calculate(current, dropped);
    const patch = result.patch as JsonObject;
    assert.ok(isObject(patch["data"]) && patch["data"]["a"] === null && !("theirs" in patch["data"]));
  });

  for (const compressed of [false, true]) {
    describe(`a record written with full values (${compressed ? "compressed" : "plain JSON"}), before digests`, () => {
      const old = (): JsonObject => live(applied, fullValueRecord(applied, compressed));

      it("needs no write on the first pass after the upgrade", () => {
        assert.deepEqual(paths(old(), applied), []);
      });

      it("still sees a change in Git, drift and a removal", () => {
        assert.deepEqual(paths(old(), declared({ a: long(), b, short: "1" }, { note })), [`${ChangeOp.Change} data.a`]);
        const drifted = old();
        (drifted["data"] as JsonObject)["b"] = "edited";
        assert.deepEqual(paths(drifted, applied), [`${ChangeOp.Change} data.b`]);
        assert.deepEqual(paths(old(), declared({ b, short: "1" }, { note })), [`${ChangeOp.Remove} data.a`]);
      });
    });
  }

  it("a record with full and digested values mixed reads as one", () => {
    const record = annotator.recordOf(applied);
    (record["data"] as JsonObject)["a"] = a;
    const current = live(applied, canonicalJson(record));
    assert.deepEqual(paths(current, applied), []);
    assert.deepEqual(paths(current, declared({ short: "1" }, { note })), [
      `${ChangeOp.Remove} data.a`,
      `${ChangeOp.Remove} data.b`,
    ]);
  });
});
