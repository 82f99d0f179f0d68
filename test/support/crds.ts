/**
 * Custom resource definitions the tests declare, built the same way everywhere.
 */
import type { JsonObject } from "./fixtures.ts";

/**
 * `gadgets.<group>`: a namespaced Gadget whose `spec.items` is a list keyed by `name` (`map`) or replaced
 * whole (`atomic`): what decides whether another field manager's item survives a three-way match.
 */
export function gadgetCrd(group: string, listType: "map" | "atomic"): JsonObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `gadgets.${group}` },
    spec: {
      group,
      names: { kind: "Gadget", plural: "gadgets", singular: "gadget", listKind: "GadgetList" },
      scope: "Namespaced",
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
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
}
