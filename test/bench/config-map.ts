import type { KubeObject } from "@driftless/kube";

/** The ConfigMap of the reconciler benchmark: small, like the ones teams keep in Git. */
export function benchConfigMap(name: string, namespace: string, value: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace },
    data: { value, owner: "bench", description: "a small config map like the ones teams keep in Git" },
  };
}
