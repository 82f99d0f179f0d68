import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeObject } from "@driftless/kube";
import { Annotator } from "@driftless/objectmatcher";
import { digestRecord, hasRecordDigest, restoreRecord } from "./record-digest.ts";

const annotator = new Annotator();
const key = annotator.annotationKey;

function body(value: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "c", namespace: "ns", annotations: { "configsync.gke.io/token": "abc" } },
    data: { value, padding: "x".repeat(200) },
  };
}

function written(value: string): KubeObject {
  const object = structuredClone(body(value));
  annotator.setLastAppliedAnnotation(object);
  return { ...object, metadata: { ...object.metadata, resourceVersion: "7", uid: "u" } };
}

void describe("record digests", () => {
  const digest = digestRecord(key);

  void it("keep a digest in place of the record, and put the record back from the body that wrote it", () => {
    const live = written("v1");
    const cached = digest(live);
    assert.ok(hasRecordDigest(cached, key));
    assert.ok((cached.metadata.annotations?.[key]?.length ?? 0) < (live.metadata.annotations?.[key]?.length ?? 0));
    assert.deepEqual(restoreRecord(cached, [body("v2"), body("v1")], annotator), live);
  });

  void it("give up when no body wrote that record", () => {
    assert.equal(restoreRecord(digest(written("v1")), [body("v2")], annotator), undefined);
  });

  void it("leave objects with a real record, or a short one, as they are", () => {
    const live = written("v1");
    assert.equal(restoreRecord(live, [], annotator), live);
    const small: KubeObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c", annotations: { [key]: "{}" } },
    };
    assert.equal(digest(small), small);
  });
});
