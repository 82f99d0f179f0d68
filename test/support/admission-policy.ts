/**
 * A ValidatingAdmissionPolicy that refuses chosen requests: a policy engine with a real reason to refuse,
 * for tests of what a refusal does to a sync. Removed when the test ends.
 */
import type { TestContext } from "node:test";
import { KubeClient, type KubeObject, type ResourceMapping } from "@driftless/kube";
import { testEnv } from "./env.ts";

const policies: ResourceMapping = {
  group: "admissionregistration.k8s.io",
  version: "v1",
  kind: "ValidatingAdmissionPolicy",
  resource: "validatingadmissionpolicies",
  namespaced: false,
  verbs: [],
};
const policyBindings: ResourceMapping = {
  ...policies,
  kind: "ValidatingAdmissionPolicyBinding",
  resource: "validatingadmissionpolicybindings",
};

/**
 * A ValidatingAdmissionPolicy (and its binding) that refuses requests matching `rule` and `when`
 * with `message`: a policy engine with a real, per-sync reason to refuse. Removed when the test ends,
 * or earlier by the function returned. The API server enforces it a moment after this returns: probe.
 */
export async function denyByPolicy(
  t: TestContext,
  name: string,
  deny: { readonly rule: Record<string, string[]>; readonly when: string; readonly message: string },
): Promise<() => Promise<void>> {
  const client = await KubeClient.fromKubeconfig(testEnv().kubeconfig);
  await client.create(policies, {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicy",
    metadata: { name },
    spec: {
      failurePolicy: "Fail",
      matchConstraints: { resourceRules: [deny.rule] },
      matchConditions: [{ name: "this-case", expression: deny.when }],
      validations: [{ expression: "false", message: deny.message }],
    },
  } as KubeObject);
  await client.create(policyBindings, {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicyBinding",
    metadata: { name },
    spec: { policyName: name, validationActions: ["Deny"] },
  } as KubeObject);
  const lift = async (): Promise<void> => {
    await client.delete(policyBindings, undefined, name).catch(() => undefined);
    await client.delete(policies, undefined, name).catch(() => undefined);
  };
  t.after(lift);
  return lift;
}
