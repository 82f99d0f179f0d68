import type { ObjectRef } from "@driftless/api";

/** Group, kind, namespace and name: what an inventory entry and an error resource name. */
export type ObjectId = ObjectRef;

// Ids are immutable and the same ones are keyed over and over (every pass, every sort comparison):
// at 10,000 objects building the string each time was hundreds of thousands of short-lived strings.
const keys = new WeakMap<ObjectId, string>();

/** A stable map key for an object id; "" namespace and absent namespace are the same (cluster-scoped). */
export function idKey(id: ObjectId): string {
  let key = keys.get(id);
  if (key === undefined) {
    key = `${id.group}/${id.kind}/${id.namespace ?? ""}/${id.name}`;
    keys.set(id, key);
  }
  return key;
}

/** An object as Config Sync's errors name it: `Deployment.apps, shop/web`, `Namespace, /shop`. */
export function describeId(id: ObjectId): string {
  return `${id.group === "" ? id.kind : `${id.kind}.${id.group}`}, ${id.namespace ?? ""}/${id.name}`;
}

/** Kinds whose names may hold ':' (system:...), which cli-utils writes as "__" in an object's key. */
const rbacKinds = new Set(["Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"]);

/**
 * An object as cli-utils' ObjMetadata prints it, `namespace_name_group_Kind` (`shop_web_apps_Deployment`,
 * `_shop__Namespace`): how Config Sync's applier names the other object in a depends-on skip.
 */
export function objMetadataKey(id: ObjectId): string {
  const rbac = id.group === "rbac.authorization.k8s.io" && rbacKinds.has(id.kind);
  const name = rbac ? id.name.replaceAll(":", "__") : id.name;
  return `${id.namespace ?? ""}_${name}_${id.group}_${id.kind}`;
}

export function groupOfApiVersion(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash === -1 ? "" : apiVersion.slice(0, slash);
}

/** Orders ids for stable output (inventory spec, status, logs). */
export function compareIds(a: ObjectId, b: ObjectId): number {
  const left = idKey(a);
  const right = idKey(b);
  return left < right ? -1 : left > right ? 1 : 0;
}
