import { setTimeout as delay } from "node:timers/promises";
import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import type { KubeClient, KubeObject, ResourceMapping } from "@driftless/kube";
import { computeHealth, HealthStatus } from "./kstatus.ts";

export const crdMapping: ResourceMapping = {
  group: "apiextensions.k8s.io",
  version: "v1",
  kind: "CustomResourceDefinition",
  resource: "customresourcedefinitions",
  namespaced: false,
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
};

/**
 * Waits until every named CRD reports Established=True; a CRD that never does stalls the pass. One kstatus
 * reads Failed (its names refused) is not waited for, as cli-utils' wait ends there: it is left out.
 * Returns each as read then (its schema is the one its custom resources are now validated with); a
 * `signal` (the reconciler stopping) ends the wait early with those Established so far.
 */
export async function waitForEstablished(
  client: KubeClient,
  names: readonly string[],
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<KubeObject[]> {
  const deadline = Date.now() + timeoutMs;
  const established: KubeObject[] = [];
  for (const name of names) {
    for (;;) {
      const crd = await client.get(crdMapping, undefined, name);
      const conditions =
        (crd?.["status"] as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
      if (crd !== undefined && conditions.some((c) => c.type === "Established" && c.status === "True")) {
        established.push(crd);
        break;
      }
      if (computeHealth(crd) === HealthStatus.Failed) break;
      if (Date.now() > deadline) {
        throw new DriftlessError({
          code: KnvCode.Apply,
          errorClass: ErrorClass.Stalled,
          message: `CustomResourceDefinition ${name} was not Established within ${timeoutMs} ms`,
          resources: [{ group: "apiextensions.k8s.io", kind: "CustomResourceDefinition", name }],
        });
      }
      if (signal?.aborted === true) return established;
      await delay(100);
    }
  }
  return established;
}
