import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { applyPatch } from "./apply-patch.ts";
import { formatPath } from "./changes.ts";
import { canonicalJson, cloneJson, deepEqual, isObject } from "./json.ts";
import type { JsonObject } from "./json.ts";
import { CustomResourceSchemaRegistry } from "./openapi.ts";
import { PatchMaker } from "./patch-maker.ts";
import { annotator, maker, withRecord } from "./testdata/harness.ts";

/**
 * Keys that name members of Object.prototype are ordinary keys of a ConfigMap's data, a label or an
 * annotation. `__proto__` only exists as an own key when built as data (JSON.parse, Object.fromEntries):
 * an object literal or an assignment would set the prototype instead, so every fixture is built that way.
 */
const KEYS = ["constructor", "toString", "__proto__", "hasOwnProperty"] as const;
const PLACES = ["data", "labels", "annotations"] as const;
type Place = (typeof PLACES)[number];

/** What the API server hands back: JSON text, parsed. */
function served(value: unknown): JsonObject {
  return JSON.parse(JSON.stringify(value)) as JsonObject;
}

function configMap(place: Place, entries: [string, string][]): JsonObject {
  const map = Object.fromEntries(entries);
  const metadata: JsonObject = { name: "c", namespace: "ns" };
  if (place !== "data") metadata[place] = map;
  return { apiVersion: "v1", kind: "ConfigMap", metadata, data: place === "data" ? map : { other: "x" } };
}

function pathOf(place: Place, key: string): string {
  return formatPath(place === "data" ? ["data", key] : ["metadata", place, key]);
}

/** The patch's one entry at `place`, as JSON text (what is sent). */
function patchAt(place: Place, key: string, value: string | null): string {
  const entry = Object.fromEntries([[key, value]]);
  return JSON.stringify(place === "data" ? { data: entry } : { metadata: { [place]: entry } });
}

/** The entries at `place` of an object, without our record annotation, sorted. */
function entriesAt(object: JsonObject, place: Place): [string, unknown][] {
  const metadata = object["metadata"];
  const map = place === "data" ? object["data"] : isObject(metadata) ? metadata[place] : undefined;
  if (!isObject(map)) return [];
  return Object.entries(map)
    .filter(([key]) => key !== annotator.annotationKey)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Live object last applied from `before`, matched against `after`, and the object the patch makes of it. */
function cycle(place: Place, before: [string, string][], after: [string, string][]) {
  const applied = configMap(place, before);
  const live = served(withRecord(served(applied), applied));
  const result = maker.calculate(live, configMap(place, after));
  return { result, updated: served(applyPatch(live, result)) };
}

describe("keys named like Object.prototype members are data", () => {
  for (const place of PLACES) {
    for (const key of KEYS) {
      const other: [string, string] = ["ordinary", "1"];

      it(`adds ${place} key ${key}`, () => {
        const { result, updated } = cycle(place, [other], [other, [key, "v1"]]);
        assert.deepEqual(
          result.changes.map((c) => `${c.op} ${formatPath(c.path)}`),
          [`add ${pathOf(place, key)}`],
        );
        assert.equal(JSON.stringify(result.patch), patchAt(place, key, "v1"));
        assert.deepEqual(entriesAt(updated, place), [other, [key, "v1"]].sort());
      });

      it(`changes ${place} key ${key}`, () => {
        const { result, updated } = cycle(place, [other, [key, "v1"]], [other, [key, "v2"]]);
        assert.deepEqual(
          result.changes.map((c) => `${c.op} ${formatPath(c.path)}`),
          [`change ${pathOf(place, key)}`],
        );
        assert.equal(JSON.stringify(result.patch), patchAt(place, key, "v2"));
        assert.deepEqual(entriesAt(updated, place), [other, [key, "v2"]].sort());
      });

      it(`removes ${place} key ${key} dropped from the declaration`, () => {
        const { result, updated } = cycle(place, [other, [key, "v1"]], [other]);
        assert.deepEqual(
          result.changes.map((c) => `${c.op} ${formatPath(c.path)}`),
          [`remove ${pathOf(place, key)}`],
        );
        assert.equal(JSON.stringify(result.patch), patchAt(place, key, null));
        assert.deepEqual(entriesAt(updated, place), [other]);
      });

      it(`finds nothing to do when ${place} key ${key} is live as declared`, () => {
        assert.equal(cycle(place, [other, [key, "v1"]], [other, [key, "v1"]]).result.isEmpty(), true);
      });
    }
  }

  it("records such keys in the last-applied record", () => {
    const declared = served({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } });
    declared["data"] = served(Object.fromEntries(KEYS.map((key) => [key, "v"])));
    const record = annotator.recordOf(declared);
    assert.deepEqual(Object.keys(record["data"] as JsonObject), [...KEYS].sort());
    assert.equal(Object.getPrototypeOf(record["data"]), Object.prototype);
  });

  it("copies, compares and prints a __proto__ key as a key", () => {
    const value = JSON.parse('{"b":2,"__proto__":{"a":1}}') as JsonObject;
    assert.equal(canonicalJson(value), '{"__proto__":{"a":1},"b":2}');
    assert.equal(JSON.stringify(cloneJson(value)), '{"b":2,"__proto__":{"a":1}}');
    assert.equal(deepEqual(JSON.parse('{"__proto__":{}}'), { other: {} }), false);
    assert.equal(deepEqual(JSON.parse('{"__proto__":{}}'), JSON.parse('{"__proto__":{}}')), true);
  });

  describe("as field names of a custom resource's schema", () => {
    const properties = JSON.parse(
      '{"constructor":{"type":"string"},"toString":{"type":"string"},"__proto__":{"type":"string"},"known":{"type":"string"}}',
    ) as JsonObject;
    const crd = {
      spec: {
        group: "example.com",
        names: { kind: "Widget", plural: "widgets" },
        versions: [
          {
            name: "v1",
            served: true,
            schema: { openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties } } } },
          },
        ],
      },
    };
    const schemas = new CustomResourceSchemaRegistry();
    schemas.setCustomResourceDefinition("widgets.example.com", crd);
    const crMaker = new PatchMaker(annotator, { schemas });
    const widget = (spec: [string, string][]): JsonObject =>
      served({ apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" }, spec: Object.fromEntries(spec) });

    it("removes a declared field named like a prototype member with a merge patch", () => {
      for (const key of ["constructor", "toString", "__proto__"]) {
        const applied = widget([
          ["known", "k"],
          [key, "v"],
        ]);
        const live = served(withRecord(served(applied), applied));
        const result = crMaker.calculate(live, widget([["known", "k"]]));
        assert.equal(JSON.stringify(result.patch), JSON.stringify({ spec: Object.fromEntries([[key, null]]) }), key);
        assert.deepEqual(Object.keys(applyPatch(live, result)["spec"] as JsonObject), ["known"], key);
      }
    });

    it("a field the structural schema does not know is pruned by the server, whatever its name", () => {
      for (const key of ["valueOf", "isPrototypeOf", "hasOwnProperty"]) {
        const live = served(withRecord(widget([["known", "k"]]), widget([["known", "k"]])));
        assert.equal(
          crMaker
            .calculate(
              live,
              widget([
                ["known", "k"],
                [key, "v"],
              ]),
            )
            .isEmpty(),
          true,
          key,
        );
      }
    });
  });
});
