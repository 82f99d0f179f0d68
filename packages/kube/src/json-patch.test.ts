import { test } from "node:test";
import assert from "node:assert/strict";
import { jsonPatch, type JsonPatchOp } from "./json-patch.ts";

/** Applies `ops` as the API server does (the paths this module makes: objects by key, replacements whole). */
function apply(doc: unknown, ops: readonly JsonPatchOp[]): unknown {
  let root = structuredClone(doc);
  for (const op of ops) {
    const keys =
      op.path === ""
        ? []
        : op.path
            .slice(1)
            .split("/")
            .map((k) => k.replace(/~1/g, "/").replace(/~0/g, "~"));
    if (keys.length === 0) {
      if (op.op !== "remove") root = structuredClone(op.value);
      continue;
    }
    let parent = root as Record<string, unknown>;
    for (const key of keys.slice(0, -1)) parent = parent[key] as Record<string, unknown>;
    const last = keys[keys.length - 1] ?? "";
    if (op.op === "remove") delete parent[last];
    else parent[last] = structuredClone(op.value);
  }
  return root;
}

test("a patch from one object to another, applied to the first, gives the second", () => {
  const from = {
    metadata: { name: "a", labels: { keep: "1", drop: "2" }, annotations: { "a/b~c": "x" } },
    data: { list: [1, 2, 3], nested: { same: true, changed: "old" } },
    spec: { gone: {} },
  };
  const to = {
    metadata: { name: "a", labels: { keep: "1", added: "3" }, annotations: { "a/b~c": "y" } },
    data: { list: [1, 3], nested: { same: true, changed: "new" }, fresh: { deep: [null] } },
  };
  const ops = jsonPatch(from, to);
  assert.deepEqual(apply(from, ops), to);
  assert.ok(
    ops.some((op) => op.path === "/metadata/annotations/a~1b~0c"),
    JSON.stringify(ops),
  );
  assert.ok(!ops.some((op) => op.path.startsWith("/data/nested/same")), "an equal value is not sent");
  assert.deepEqual(jsonPatch(to, structuredClone(to)), []);
});

test("keys named as Object.prototype's members (constructor, toString, __proto__) are added and removed like any other", () => {
  const from = JSON.parse('{"data":{"toString":"a","valueOf":"b","__proto__":"c","keep":"d"}}') as unknown;
  const to = JSON.parse('{"data":{"constructor":"x","hasOwnProperty":"y","keep":"d"}}') as unknown;
  const ops = jsonPatch(from, to);
  assert.deepEqual(ops.map((op) => `${op.op} ${op.path}`).sort(), [
    "add /data/constructor",
    "add /data/hasOwnProperty",
    "remove /data/__proto__",
    "remove /data/toString",
    "remove /data/valueOf",
  ]);
});

test("a patch of more changes than a call's arguments can hold is made whole", () => {
  const keys = Array.from({ length: 200_000 }, (_, i) => `k${i}`);
  const to = { spec: { map: Object.fromEntries(keys.map((k) => [k, 1])) } };
  const ops = jsonPatch({ spec: { map: {} } }, to);
  assert.equal(ops.length, keys.length);
});

test("a key set to undefined in the copy written over (a watch cache's managedFields) is absent: nothing removes it", () => {
  const from = { metadata: { name: "a", managedFields: undefined }, data: { k: "1" } };
  const to = { metadata: { name: "a", managedFields: undefined }, data: { k: "2" } };
  assert.deepEqual(jsonPatch(from, to), [{ op: "replace", path: "/data/k", value: "2" }]);
});
