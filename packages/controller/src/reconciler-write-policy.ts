/**
 * The ValidatingAdmissionPolicy that keeps a reconciler from changing its own sync's spec
 * (manifests/reconciler-admission-policy.yaml). RBAC grants a reconciler update on its RSync for its
 * finalizer and annotations; without the policy a reconciler restricted by roleRefs could drop them and
 * be bound to cluster-admin. The manager does not install it (that would take write access to admission
 * policies); it says when the policy or its binding is missing.
 */
import { isForbidden, type KubeClient, type ResourceMapping } from "@driftless/kube";

export const ReconcilerWritePolicyName = "reconciler-sync-writes.driftless.dev";

const policyMapping = (kind: string, resource: string): ResourceMapping => ({
  group: "admissionregistration.k8s.io",
  version: "v1",
  kind,
  resource,
  namespaced: false,
  verbs: ["get"],
});

/** What is missing of the policy and its binding (both named ReconcilerWritePolicyName); empty when both are there. */
export async function missingReconcilerWritePolicy(client: KubeClient): Promise<string[]> {
  const missing: string[] = [];
  for (const [kind, resource] of [
    ["ValidatingAdmissionPolicy", "validatingadmissionpolicies"],
    ["ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings"],
  ] as const) {
    try {
      if ((await client.get(policyMapping(kind, resource), undefined, ReconcilerWritePolicyName)) === undefined)
        missing.push(`${kind} ${ReconcilerWritePolicyName}`);
    } catch (error) {
      // An older manifests/ without the manager's `get` on it: say so rather than guess.
      if (!isForbidden(error)) throw error;
      missing.push(`${kind} ${ReconcilerWritePolicyName} (cannot be read: forbidden)`);
    }
  }
  return missing;
}
