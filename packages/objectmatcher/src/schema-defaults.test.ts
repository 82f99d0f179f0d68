/**
 * A custom resource's schema `default`s, as the API server's structural defaulting applies them: an
 * undeclared field it filled in is the server's, and a defaulted key of a keyed list is part of the
 * item's identity.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { applyPatch } from "./apply-patch.ts";
import type { JsonObject } from "./json.ts";
import { Annotator } from "./last-applied.ts";
import { CustomResourceSchemaRegistry } from "./openapi.ts";
import { PatchMaker } from "./patch-maker.ts";
import type { PatchResult } from "./result.ts";

const crd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "gadgets.example.com" },
  spec: {
    group: "example.com",
    scope: "Namespaced",
    names: { plural: "gadgets", singular: "gadget", kind: "Gadget", listKind: "GadgetList" },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: {
                type: "object",
                properties: {
                  steps: {
                    type: "array",
                    items: {
                      type: "object",
                      properties: {
                        name: { type: "string" },
                        weight: { type: "integer", default: 1 },
                        retry: {
                          type: "object",
                          default: {},
                          properties: { limit: { type: "integer", default: 3 } },
                        },
                      },
                    },
                  },
                  ports: {
                    type: "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["port", "protocol"],
                    items: {
                      type: "object",
                      required: ["port"],
                      properties: {
                        port: { type: "integer" },
                        protocol: { type: "string", default: "TCP" },
                        name: { type: "string" },
                      },
                    },
                  },
                  selector: {
                    type: "object",
                    "x-kubernetes-map-type": "atomic",
                    properties: { app: { type: "string" }, mode: { type: "string", default: "fast" } },
                  },
                  level: { type: "string", default: "info" },
                },
              },
            },
          },
        },
      },
    ],
  },
};

const annotator = new Annotator();
const schemas = new CustomResourceSchemaRegistry();
schemas.setCustomResourceDefinition("gadgets.example.com", crd);
const maker = new PatchMaker(annotator, { schemas });

function gadget(spec: JsonObject): JsonObject {
  return { apiVersion: "example.com/v1", kind: "Gadget", metadata: { name: "g", namespace: "n" }, spec };
}

/** The live object with our record of `applied` (default: the declaration) on it. */
function match(live: JsonObject, declared: JsonObject, applied: JsonObject = declared): PatchResult {
  const record = structuredClone(applied);
  annotator.setLastAppliedAnnotation(record);
  const metadata = live["metadata"] as JsonObject;
  metadata["annotations"] = (record["metadata"] as JsonObject)["annotations"] ?? null;
  return maker.calculate(live, declared);
}

describe("custom resource schema defaults", () => {
  it("match: an atomic list item with the server's defaults filled in, nested ones too", () => {
    const live = gadget({ steps: [{ name: "a", weight: 1, retry: { limit: 3 } }] });
    const result = match(live, gadget({ steps: [{ name: "a" }] }));
    assert.equal(result.isEmpty(), true, result.render());
  });

  it("update: an atomic list item whose undeclared defaulted field someone changed", () => {
    const live = gadget({ steps: [{ name: "a", weight: 5, retry: { limit: 3 } }] });
    const result = match(live, gadget({ steps: [{ name: "a" }] }));
    assert.equal(result.isEmpty(), false);
  });

  it("match: an atomic map with the server's default filled in", () => {
    const live = gadget({ selector: { app: "x", mode: "fast" } });
    const result = match(live, gadget({ selector: { app: "x" } }));
    assert.equal(result.isEmpty(), true, result.render());
  });

  it("match: a keyed list item whose key the server defaulted (protocol: TCP) is the declared item", () => {
    const live = gadget({ ports: [{ port: 80, protocol: "TCP" }] });
    const result = match(live, gadget({ ports: [{ port: 80 }] }));
    assert.equal(result.isEmpty(), true, result.render());
  });

  it("update: a change to that item patches it in place, never a second item with the same key", () => {
    const live = gadget({ ports: [{ port: 80, protocol: "TCP" }] });
    const result = match(live, gadget({ ports: [{ port: 80, name: "http" }] }), gadget({ ports: [{ port: 80 }] }));
    assert.equal(result.isEmpty(), false);
    const patched = applyPatch(live, result);
    assert.deepEqual((patched["spec"] as JsonObject)["ports"], [{ port: 80, protocol: "TCP", name: "http" }]);
  });

  it("match: a field declared with its default and then dropped from Git is left as the server would fill it", () => {
    const live = gadget({ level: "info" });
    const result = match(live, gadget({}), gadget({ level: "info" }));
    assert.equal(result.isEmpty(), true, result.render());
  });

  it("update: a field declared with another value and then dropped from Git is removed (the server defaults it)", () => {
    const live = gadget({ level: "debug" });
    const result = match(live, gadget({}), gadget({ level: "debug" }));
    assert.equal(result.isEmpty(), false);
  });
});
