/**
 * The Role of one sync that lets its reconciler read the Secrets its spec names, and only those
 * (rbac-plan.ts). Writing it needs `escalate` on roles: the manager itself reads no Secret.
 */
import { isAlreadyExists, type KubeClient, type KubeObject } from "@driftless/kube";
import type { SyncRef } from "@driftless/queue";
import { syncOwnedSelector } from "./labels.ts";
import { mutate } from "./mutate.ts";
import type { SecretRole } from "./rbac-plan.ts";
import { Resource } from "./resources.ts";

function rulesOf(role: SecretRole): unknown[] {
  return [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"], resourceNames: [...role.secretNames] }];
}

/** Creates the Role, or puts its rules and labels right. */
export async function ensureSecretRole(
  client: KubeClient,
  role: SecretRole,
  labels: Record<string, string>,
): Promise<void> {
  const rules = rulesOf(role);
  const live = await mutate(client, Resource.Role, role.namespace, role.name, (current) => {
    const right =
      JSON.stringify(current["rules"]) === JSON.stringify(rules) &&
      Object.entries(labels).every(([k, v]) => current.metadata.labels?.[k] === v);
    return right
      ? undefined
      : { ...current, metadata: { ...current.metadata, labels: { ...current.metadata.labels, ...labels } }, rules };
  });
  if (live !== undefined) return;
  try {
    await client.create(Resource.Role, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: role.name, namespace: role.namespace, labels },
      rules,
    });
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
  }
}

export async function listOwnedRoles(client: KubeClient, sync: SyncRef): Promise<KubeObject[]> {
  return (await client.list(Resource.Role, { labelSelector: syncOwnedSelector(sync) })).items;
}

export async function deleteRole(client: KubeClient, role: KubeObject): Promise<void> {
  await client.delete(Resource.Role, role.metadata.namespace, role.metadata.name);
}
