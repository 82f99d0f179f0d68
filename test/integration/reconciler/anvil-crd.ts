/** Anvils: a throwaway custom resource kind for tests of CRDs that change under a running reconciler. */
import type { KubeObject, ResourceMapping } from "@driftless/kube";

/** The Anvils CRD of `group`, its schema open: any spec is kept. */
export function anvilCrd(
  group: string,
  versions: readonly { name: string; served: boolean; storage: boolean }[] = [
    { name: "v1", served: true, storage: true },
  ],
  scope = "Namespaced",
): KubeObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `anvils.${group}` },
    spec: {
      group,
      names: { kind: "Anvil", plural: "anvils", singular: "anvil" },
      scope,
      versions: versions.map((v) => ({
        ...v,
        schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
      })),
    },
  };
}

/** The Anvils of `group`, as the CRD above serves them. */
export function anvils(group: string, version = "v1", namespaced = true): ResourceMapping {
  return { group, version, kind: "Anvil", resource: "anvils", namespaced, verbs: [] };
}
