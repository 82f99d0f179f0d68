import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { applyPatch } from "./apply-patch.ts";
import { formatPath } from "./changes.ts";
import type { JsonObject } from "./json.ts";
import { Annotator } from "./last-applied.ts";
import { CustomResourceSchemaRegistry, schemasFromCrd, schemasFromOpenApi } from "./openapi.ts";
import { PatchMaker } from "./patch-maker.ts";

/** An OpenAPI v3 document as `/openapi/v3/apis/example.com/v1` serves it for a CRD. */
const document = {
  openapi: "3.0.0",
  components: {
    schemas: {
      "com.example.v1.Widget": {
        type: "object",
        "x-kubernetes-group-version-kind": [{ group: "example.com", kind: "Widget", version: "v1" }],
        properties: {
          apiVersion: { type: "string" },
          kind: { type: "string" },
          metadata: { allOf: [{ $ref: "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" }] },
          spec: {
            type: "object",
            properties: {
              items: {
                type: "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                items: {
                  type: "object",
                  required: ["name"],
                  properties: {
                    name: { type: "string" },
                    value: { type: "string" },
                    port: { "x-kubernetes-int-or-string": true },
                  },
                },
              },
              tags: { type: "array", "x-kubernetes-list-type": "set", items: { type: "string" } },
              order: { type: "array", items: { type: "string" } },
              selector: {
                type: "object",
                "x-kubernetes-map-type": "atomic",
                additionalProperties: { type: "string" },
              },
              labels: { type: "object", additionalProperties: { type: "string" } },
              free: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
            },
          },
        },
      },
    },
  },
};

const registry = new CustomResourceSchemaRegistry();
registry.setGroupVersion("example.com/v1", document);
const annotator = new Annotator();
const withSchemas = new PatchMaker(annotator, { schemas: registry });
const without = new PatchMaker(annotator);

function widget(spec: JsonObject): JsonObject {
  return { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w", namespace: "ns" }, spec };
}

/** Live, carrying the record of `applied`. */
function live(spec: JsonObject, applied: JsonObject): JsonObject {
  const record = structuredClone(widget(applied));
  annotator.setLastAppliedAnnotation(record);
  const object = widget(spec);
  (object["metadata"] as JsonObject)["annotations"] = (record["metadata"] as JsonObject)["annotations"] ?? null;
  return object;
}

function paths(maker: PatchMaker, current: JsonObject, declared: JsonObject): string[] {
  return maker.calculate(current, declared).changes.map((c) => formatPath(c.path));
}

describe("custom resources with their OpenAPI v3 schema", () => {
  const declaredA = { items: [{ name: "a", value: "1" }] };
  const liveAB = {
    items: [
      { name: "a", value: "1" },
      { name: "b", value: "theirs" },
    ],
  };

  it("reads the kinds of a document, with ObjectMeta for metadata", () => {
    const schemas = schemasFromOpenApi(document);
    assert.deepEqual([...schemas.keys()], ["example.com/v1 Widget"]);
    const spec = schemas.get("example.com/v1 Widget")?.fields?.["spec"];
    assert.equal(spec?.fields?.["items"]?.list, "map");
    assert.deepEqual(spec?.fields?.["items"]?.keys, ["name"]);
    assert.equal(schemas.get("example.com/v1 Widget")?.fields?.["metadata"]?.fields?.["ownerReferences"]?.list, "map");
  });

  it("ignores an item another field manager added to a keyed list (x-kubernetes-list-type: map)", () => {
    assert.deepEqual(paths(withSchemas, live(liveAB, declaredA), widget(declaredA)), []);
    // Without the schema, the list is atomic: the other manager's item is a difference.
    assert.deepEqual(paths(without, live(liveAB, declaredA), widget(declaredA)), ["spec.items"]);
  });

  it("a declared change to one item keeps the others' items in the patch and in the update", () => {
    const declared = widget({ items: [{ name: "a", value: "2" }] });
    const current = live(liveAB, declaredA);
    const result = withSchemas.calculate(current, declared);
    assert.deepEqual(
      result.changes.map((c) => formatPath(c.path)),
      ['spec.items[name="a"].value'],
    );
    assert.equal(result.patchType, "merge");
    const updated = applyPatch(current, result);
    assert.deepEqual((updated["spec"] as JsonObject)["items"], [
      { name: "a", value: "2" },
      { name: "b", value: "theirs" },
    ]);
    assert.ok(withSchemas.calculate(updated, declared).isEmpty());
  });

  it("removes only the item we no longer declare", () => {
    const current = live({ items: [...liveAB.items, { name: "c" }] }, { items: [{ name: "a" }, { name: "c" }] });
    const result = withSchemas.calculate(current, widget(declaredA));
    assert.deepEqual(
      result.changes.map((c) => formatPath(c.path)),
      ['spec.items[name="c"]'],
    );
    const updated = applyPatch(current, result);
    assert.deepEqual(
      ((updated["spec"] as JsonObject)["items"] as JsonObject[]).map((i) => i["name"]),
      ["a", "b"],
    );
  });

  it("sets keep others' members; atomic lists still compare whole, in order", () => {
    assert.deepEqual(paths(withSchemas, live({ tags: ["x", "y"] }, { tags: ["x"] }), widget({ tags: ["x"] })), []);
    assert.deepEqual(
      paths(withSchemas, live({ order: ["b", "a"] }, { order: ["a", "b"] }), widget({ order: ["a", "b"] })),
      ["spec.order"],
    );
  });

  it("an atomic map (x-kubernetes-map-type: atomic) is compared and replaced whole; a granular one merges", () => {
    const declared = widget({ selector: { app: "web" }, labels: { a: "1" } });
    const current = live(
      { selector: { app: "web", extra: "x" }, labels: { a: "1", theirs: "2" } },
      declared["spec"] as JsonObject,
    );
    const result = withSchemas.calculate(current, declared);
    assert.deepEqual(
      result.changes.map((c) => formatPath(c.path)),
      ["spec.selector"],
    );
    const updated = applyPatch(current, result);
    assert.deepEqual((updated["spec"] as JsonObject)["selector"], { app: "web" });
    assert.deepEqual((updated["spec"] as JsonObject)["labels"], { a: "1", theirs: "2" });
  });

  it("a declared field the structural schema does not know is pruned by the server, so is no change", () => {
    assert.deepEqual(paths(withSchemas, live({}, {}), widget({ typo: 1 })), []);
    assert.deepEqual(paths(withSchemas, live({}, {}), widget({ free: { anything: 1 } })), ["spec.free"]);
  });

  it('an int-or-string is stored as sent: 80 and "80" differ', () => {
    const declared = widget({ items: [{ name: "a", port: 80 }] });
    assert.deepEqual(paths(withSchemas, live({ items: [{ name: "a", port: "80" }] }, {}), declared), [
      'spec.items[name="a"].port',
    ]);
  });

  it("replacing a group-version's document forgets kinds it no longer has", () => {
    const r = new CustomResourceSchemaRegistry();
    assert.deepEqual(r.setGroupVersion("example.com/v1", document), ["Widget"]);
    assert.ok(r.schemaFor("example.com/v1", "Widget"));
    assert.deepEqual(r.setGroupVersion("example.com/v1", { components: { schemas: {} } }), []);
    assert.equal(r.schemaFor("example.com/v1", "Widget"), undefined);
  });

  it("a CRD object gives the schema the server publishes for it (its root apiVersion, kind and metadata added)", () => {
    const published = document.components.schemas["com.example.v1.Widget"];
    const { apiVersion: _apiVersion, kind: _kind, metadata: _metadata, ...own } = published.properties;
    const crd = {
      spec: {
        group: "example.com",
        names: { kind: "Widget", plural: "widgets" },
        versions: [
          { name: "v1", served: true, schema: { openAPIV3Schema: { type: "object", properties: own } } },
          { name: "v0", served: false, schema: { openAPIV3Schema: { type: "object" } } },
        ],
      },
    };
    assert.deepEqual(schemasFromCrd(crd), schemasFromOpenApi(document));
    const r = new CustomResourceSchemaRegistry();
    assert.deepEqual(r.setCustomResourceDefinition("widgets.example.com", crd), ["example.com/v1 Widget"]);
    r.setCustomResourceDefinition("widgets.example.com", undefined);
    assert.equal(r.schemaFor("example.com/v1", "Widget"), undefined);
  });
});
