/**
 * Custom resource definitions the tests and benches declare, built the same way everywhere.
 */
import type { JsonObject } from "./fixtures.ts";

/** A namespaced `kind` of `group`, served and stored as v1, with these properties under `spec`. */
export function namespacedCrd(group: string, kind: string, specProperties: JsonObject): JsonObject {
  const plural = `${kind.toLowerCase()}s`;
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      scope: "Namespaced",
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: { spec: { type: "object", properties: specProperties } },
            },
          },
        },
      ],
    },
  };
}

/**
 * `gadgets.<group>`: a namespaced Gadget whose `spec.items` is a list keyed by `name` (`map`) or replaced
 * whole (`atomic`): what decides whether another field manager's item survives a three-way match.
 */
export function gadgetCrd(group: string, listType: "map" | "atomic"): JsonObject {
  return namespacedCrd(group, "Gadget", {
    items: {
      type: "array",
      "x-kubernetes-list-type": listType,
      ...(listType === "map" ? { "x-kubernetes-list-map-keys": ["name"] } : {}),
      items: {
        type: "object",
        required: ["name"],
        properties: { name: { type: "string" }, value: { type: "string" } },
      },
    },
  });
}

/** The benches' custom resource: `spec.size` and `spec.ports`, a list keyed by `name` (a match needs the schema). */
export function widgetCrd(group: string, kind = "Widget"): JsonObject {
  return namespacedCrd(group, kind, {
    size: { type: "integer" },
    ports: {
      type: "array",
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["name"],
      items: {
        type: "object",
        required: ["name"],
        properties: { name: { type: "string" }, port: { type: "integer" } },
      },
    },
  });
}
