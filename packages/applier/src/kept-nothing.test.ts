import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  configMapMapping,
  type KubeClient,
  type KubeObject,
  type ResourceMapping,
  type RestMapper,
  type WriteOptions,
} from "@driftless/kube";
import { Annotator, PatchMaker } from "@driftless/objectmatcher";
import { applyObject } from "./apply-object.ts";
import type { ApplyOptions } from "./apply-options.ts";
import { Operation } from "./apply-outcome.ts";
import type { DesiredObject } from "./desired.ts";
import type { LiveState } from "./live-state.ts";
import { VerifiedMatches } from "./verified-matches.ts";

const desired = (value: string): DesiredObject => ({
  id: { group: "", kind: "ConfigMap", namespace: "ns", name: "a" },
  apiVersion: "v1",
  object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "ns" }, data: { value } },
  sourcePath: "a.yaml",
  sourceHash: value,
  dependsOn: [],
});

/**
 * A stand-in API server holding one object. With `keepsNothing`, a patch is answered with the object as
 * it was (same resourceVersion), as the API server answers a write of fields it clears (a feature gate off).
 */
function server(keepsNothing: boolean) {
  let stored: KubeObject | undefined;
  let version = 0;
  const writes: { verb: string; options: WriteOptions | undefined }[] = [];
  const warnings: string[] = [];
  const client = {
    create: (_m: ResourceMapping, obj: KubeObject, options?: WriteOptions) => {
      writes.push({ verb: "create", options });
      stored = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++version) } };
      return Promise.resolve(stored);
    },
    update: (_m: ResourceMapping, _current: KubeObject, next: KubeObject, options?: WriteOptions) => {
      writes.push({ verb: "update", options });
      if (!keepsNothing) stored = { ...next, metadata: { ...next.metadata, resourceVersion: String(++version) } };
      return Promise.resolve(stored);
    },
  };
  const live: LiveState = {
    get: () => Promise.resolve(stored),
    remember: () => undefined,
    forget: () => undefined,
    refresh: () => Promise.resolve(stored),
    cachedResourceVersion: () => stored?.metadata.resourceVersion,
  };
  const annotator = new Annotator();
  const options: ApplyOptions = {
    client: client as unknown as KubeClient,
    mapper: { mappingFor: () => Promise.resolve(configMapMapping) } as unknown as RestMapper,
    live,
    sync: { kind: "RepoSync", namespace: "ns", name: "repo-sync" },
    commit: "0123456789abcdef0123456789abcdef01234567",
    annotator,
    matcher: new PatchMaker(annotator),
    verified: new VerifiedMatches(),
    fieldManager: "driftless",
    log: { warn: (message, fields) => warnings.push(`${message} ${String(fields?.["object"])}`) },
  };
  return { options, writes, warnings };
}

void describe("applyObject and a write the API server keeps nothing of", () => {
  void it("sends every create and update with fieldValidation=Strict, so an unknown field is refused, not dropped", async () => {
    const { options, writes } = server(false);
    await applyObject(desired("1"), options);
    await applyObject(desired("2"), options);
    assert.deepEqual(
      writes.map((w) => [w.verb, w.options?.fieldValidation]),
      [
        ["create", "Strict"],
        ["update", "Strict"],
      ],
    );
  });

  void it("reports an update answered with the resourceVersion it was sent against as unchanged, sends it once, and warns once", async () => {
    const { options, writes, warnings } = server(true);
    await applyObject(desired("1"), options);
    const changed = desired("2");
    const first = await applyObject(changed, options);
    assert.equal(first.operation, Operation.Unchanged, "the server stored nothing: not an update");
    assert.equal(first.error, undefined, "our own normalisation gap fails no sync");
    const again = await applyObject(changed, options);
    assert.equal(again.operation, Operation.Unchanged);
    assert.equal(writes.filter((w) => w.verb === "update").length, 1, "the same patch was sent again");
    assert.deepEqual(warnings, [
      "the API server kept nothing of a write: it will not be sent again until the object or its declaration changes ConfigMap, ns/a",
    ]);
    // A new declaration is tried again.
    assert.equal((await applyObject(desired("3"), options)).operation, Operation.Unchanged);
    assert.equal(writes.filter((w) => w.verb === "update").length, 2);
  });
});
