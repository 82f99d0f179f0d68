import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatPath } from "./changes.ts";
import type { JsonObject } from "./json.ts";
import { resolveKind } from "./kinds.ts";
import { normalizeObject } from "./normalize.ts";
import { threeWay } from "./three-way.ts";

/** Runs the three-way walk on small objects of one kind and returns the changed paths. */
function diff(
  kind: [string, string],
  original: JsonObject | undefined,
  modified: JsonObject,
  current: JsonObject,
): string[] {
  const info = resolveKind(...kind);
  const ctx = { kind: info, annotationKey: "a", ignoreStatus: true, ignoreFields: [] };
  return threeWay({
    original: original && normalizeObject(original, ctx),
    modified: normalizeObject(modified, ctx),
    current,
    kind: info,
  }).map((c) => `${c.op} ${formatPath(c.path)}`);
}

const CR: [string, string] = ["example.com/v1", "Widget"];
const POD: [string, string] = ["v1", "Pod"];

describe("three-way rules", () => {
  it("a declared value that differs live is a change; an undeclared live value is ignored", () => {
    assert.deepEqual(diff(CR, undefined, { spec: { a: 1, b: "x" } }, { spec: { a: 2, b: "x", c: true } }), [
      "change spec.a",
    ]);
  });

  it("a declared value missing live is an add", () => {
    assert.deepEqual(diff(CR, undefined, { spec: { a: { deep: 1 } } }, { spec: {} }), ["add spec.a"]);
  });

  it("a path in the original, gone from the declaration and still live, is a removal", () => {
    assert.deepEqual(diff(CR, { spec: { a: 1, b: 2 } }, { spec: { a: 1 } }, { spec: { a: 1, b: 2 } }), [
      "remove spec.b",
    ]);
  });

  it("a removal already gone live is nothing to do", () => {
    assert.deepEqual(diff(CR, { spec: { a: 1, b: 2 } }, { spec: { a: 1 } }, { spec: { a: 1 } }), []);
  });

  it("removing a declared map removes only the keys we declared in it", () => {
    assert.deepEqual(
      diff(
        CR,
        { metadata: { labels: { ours: "1" } } },
        { metadata: { name: "w" } },
        { metadata: { name: "w", labels: { ours: "1", theirs: "2" } } },
      ),
      ["remove metadata.labels.ours"],
    );
  });

  it("never compares apiVersion or kind (a list response or another served version may omit or differ)", () => {
    assert.deepEqual(
      diff(CR, undefined, { apiVersion: "example.com/v1", kind: "Widget", spec: { a: 1 } }, { spec: { a: 1 } }),
      [],
    );
  });

  it("keyed lists match by merge key and ignore order and undeclared items", () => {
    const modified = {
      spec: {
        containers: [
          { name: "a", image: "1" },
          { name: "b", image: "2" },
        ],
      },
    };
    const current = {
      spec: {
        containers: [
          { name: "injected", image: "x" },
          { name: "b", image: "2" },
          { name: "a", image: "1" },
        ],
      },
    };
    assert.deepEqual(diff(POD, modified, modified, current), []);
  });

  it("keyed lists report changes inside an item by key", () => {
    const modified = { spec: { containers: [{ name: "a", image: "2" }] } };
    assert.deepEqual(diff(POD, undefined, modified, { spec: { containers: [{ name: "a", image: "1" }] } }), [
      'change spec.containers[name="a"].image',
    ]);
  });

  it("keyed list items removed from the declaration are removed whole", () => {
    const original = { spec: { containers: [{ name: "a" }, { name: "b" }] } };
    const modified = { spec: { containers: [{ name: "a" }] } };
    const current: JsonObject = { spec: { containers: [{ name: "a" }, { name: "b", image: "x" }] } };
    assert.deepEqual(diff(POD, original, modified, current), ['remove spec.containers[name="b"]']);
  });

  it("long keyed lists (indexed rather than scanned) follow the same rules", () => {
    const env = Array.from({ length: 40 }, (_, i) => ({ name: `V${i}`, value: String(i) }));
    const modified = { spec: { containers: [{ name: "a", env }] } };
    const shuffled = [...env].reverse().concat([{ name: "INJECTED", value: "x" }]);
    assert.deepEqual(diff(POD, modified, modified, { spec: { containers: [{ name: "a", env: shuffled }] } }), []);
    const drifted = shuffled.map((e) => (e.name === "V7" ? { ...e, value: "changed" } : e));
    assert.deepEqual(diff(POD, modified, modified, { spec: { containers: [{ name: "a", env: drifted }] } }), [
      'change spec.containers[name="a"].env[name="V7"].value',
    ]);
  });

  it("a keyed list with an item lacking its merge key compares whole", () => {
    const modified = { spec: { containers: [{ image: "x" }] } };
    assert.deepEqual(diff(POD, undefined, modified, { spec: { containers: [{ name: "a", image: "x" }] } }), [
      "change spec.containers",
    ]);
  });

  it("set-like lists (finalizers) ignore others' members and remove only ours", () => {
    const original = { metadata: { finalizers: ["ours/a", "ours/b"] } };
    const modified = { metadata: { finalizers: ["ours/a", "ours/c"] } };
    const current = { metadata: { finalizers: ["theirs/x", "ours/a", "ours/b"] } };
    assert.deepEqual(diff(CR, original, modified, current), [
      'remove metadata.finalizers[="ours/b"]',
      'add metadata.finalizers[="ours/c"]',
    ]);
  });

  it("atomic lists compare whole, in order", () => {
    assert.deepEqual(diff(CR, undefined, { spec: { l: [1, 2] } }, { spec: { l: [1, 2] } }), []);
    assert.deepEqual(diff(CR, undefined, { spec: { l: [1, 2] } }, { spec: { l: [2, 1] } }), ["change spec.l"]);
    assert.deepEqual(diff(CR, undefined, { spec: { l: [{ a: 1 }] } }, { spec: { l: [{ a: 1, b: 2 }] } }), [
      "change spec.l",
    ]);
  });

  it("a built-in kind's empty declared string, list or map declares nothing (Go's omitempty drops them)", () => {
    const container = (fields: JsonObject): JsonObject => ({ spec: { containers: [{ name: "c", ...fields }] } });
    assert.deepEqual(
      diff(
        POD,
        undefined,
        container({ args: [], workingDir: "", resources: {} }),
        container({ args: ["-v"], workingDir: "/x", resources: { limits: { cpu: "1" } } }),
      ),
      [],
    );
  });

  it("a custom resource's empty declared string and list are values, stored as sent; an empty map declares nothing", () => {
    assert.deepEqual(
      diff(CR, undefined, { spec: { l: [], m: {}, s: "" } }, { spec: { l: [1], m: { a: 1 }, s: "x" } }),
      ["change spec.l", "change spec.s"],
    );
    assert.deepEqual(diff(CR, undefined, { spec: { l: [], s: "" } }, { spec: {} }), ["add spec.l", "add spec.s"]);
    assert.deepEqual(diff(CR, undefined, { spec: { l: [], s: "" } }, { spec: { l: [], s: "" } }), []);
    assert.deepEqual(diff(CR, { spec: { l: [], s: "" } }, { spec: {} }, { spec: { l: [], s: "" } }), [
      "remove spec.l",
      "remove spec.s",
    ]);
  });

  it("a map declared empty is satisfied whether or not the server kept it", () => {
    assert.deepEqual(diff(POD, undefined, { spec: { securityContext: {} } }, { spec: {} }), []);
    assert.deepEqual(
      diff(POD, undefined, { spec: { securityContext: {} } }, { spec: { securityContext: { runAsUser: 1 } } }),
      [],
    );
  });

  it("a type change is a change", () => {
    assert.deepEqual(diff(CR, undefined, { spec: { a: { b: 1 } } }, { spec: { a: "flat" } }), ["change spec.a"]);
    assert.deepEqual(diff(CR, undefined, { spec: { a: "flat" } }, { spec: { a: { b: 1 } } }), ["change spec.a"]);
  });

  it("orders changes by path, whatever the key order of the inputs", () => {
    const a = diff(CR, undefined, { spec: { z: 1, a: 1, m: 1 } }, { spec: { z: 2, a: 2, m: 2 } });
    const b = diff(CR, undefined, { spec: { m: 1, a: 1, z: 1 } }, { spec: { a: 2, m: 2, z: 2 } });
    assert.deepEqual(a, ["change spec.a", "change spec.m", "change spec.z"]);
    assert.deepEqual(a, b);
  });
});
