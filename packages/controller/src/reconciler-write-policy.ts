/**
 * The ValidatingAdmissionPolicies that keep a reconciler from changing its own sync's spec and from creating
 * another sync's ResourceGroups (manifests/reconciler-admission-policy.yaml). RBAC grants a reconciler update on
 * its RSync for its finalizer and annotations; without the policy a reconciler restricted by roleRefs could drop
 * them and be bound to cluster-admin. RBAC cannot limit `create` to a name either. The manager does not install
 * them (that would take write access to admission policies); it says when a policy or its binding is missing.
 */
import { isForbidden, type KubeClient, type ResourceMapping } from "@driftless/kube";

export const ReconcilerWritePolicyName = "reconciler-sync-writes.driftless.dev";
export const ReconcilerResourceGroupPolicyName = "reconciler-resourcegroup-creates.driftless.dev";

const policyMapping = (kind: string, resource: string): ResourceMapping => ({
  group: "admissionregistration.k8s.io",
  version: "v1",
  kind,
  resource,
  namespaced: false,
  verbs: ["get"],
});

/** What is missing of the policies and their bindings (each binding named as its policy); empty when all are there. */
export async function missingReconcilerWritePolicy(client: KubeClient): Promise<string[]> {
  const missing: string[] = [];
  for (const name of [ReconcilerWritePolicyName, ReconcilerResourceGroupPolicyName])
    for (const [kind, resource] of [
      ["ValidatingAdmissionPolicy", "validatingadmissionpolicies"],
      ["ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings"],
    ] as const) {
      try {
        if ((await client.get(policyMapping(kind, resource), undefined, name)) === undefined)
          missing.push(`${kind} ${name}`);
      } catch (error) {
        // An older manifests/ without the manager's `get` on it: say so rather than guess.
        if (!isForbidden(error)) throw error;
        missing.push(`${kind} ${name} (cannot be read: forbidden)`);
      }
    }
  return missing;
}
