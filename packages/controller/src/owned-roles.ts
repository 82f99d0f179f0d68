/**
 * The Roles of one sync (rbac-plan.ts): its own RSync and ResourceGroups by name, and the Secrets its
 * spec names. Writing a Role with rules the manager does not hold needs `escalate` on roles: the manager
 * itself reads no Secret and writes no sync's inventory.
 */
import { isDeepStrictEqual } from "node:util";
import { isAlreadyExists, type KubeClient, type KubeObject } from "@driftless/kube";
import type { SyncRef } from "@driftless/queue";
import { syncOwnedSelector } from "./labels.ts";
import { mutate } from "./mutate.ts";
import type { OwnedRole } from "./rbac-plan.ts";
import { Resource } from "./resources.ts";

function rulesOf(role: OwnedRole): unknown[] {
  return role.rules.map((r) => ({
    apiGroups: [...r.apiGroups],
    resources: [...r.resources],
    verbs: [...r.verbs],
    ...(r.resourceNames === undefined ? {} : { resourceNames: [...r.resourceNames] }),
  }));
}

/** Creates the Role, or puts its rules and labels right. */
export async function ensureOwnedRole(
  client: KubeClient,
  role: OwnedRole,
  labels: Record<string, string>,
): Promise<void> {
  const rules = rulesOf(role);
  const live = await mutate(client, Resource.Role, role.namespace, role.name, (current) => {
    const right =
      // Key order is the server's own: compared structurally, or every pass would rewrite the Role.
      isDeepStrictEqual(current["rules"], rules) &&
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

/** A sync's own Roles are all in its namespace: one labelled as its elsewhere is someone else's. */
export async function listOwnedRoles(client: KubeClient, sync: SyncRef): Promise<KubeObject[]> {
  return (await client.list(Resource.Role, { namespace: sync.namespace, labelSelector: syncOwnedSelector(sync) }))
    .items;
}

export async function deleteRole(client: KubeClient, role: KubeObject): Promise<void> {
  await client.delete(Resource.Role, role.metadata.namespace, role.metadata.name);
}
