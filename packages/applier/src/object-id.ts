import type { ObjectRef } from "@driftless/api";

/** Group, kind, namespace and name: what an inventory entry and an error resource name. */
export type ObjectId = ObjectRef;

/** A stable map key for an object id; "" namespace and absent namespace are the same (cluster-scoped). */
export function idKey(id: ObjectId): string {
  return `${id.group}/${id.kind}/${id.namespace ?? ""}/${id.name}`;
}

export function groupOfApiVersion(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash === -1 ? "" : apiVersion.slice(0, slash);
}

/** Orders ids for stable output (inventory spec, status, logs). */
export function compareIds(a: ObjectId, b: ObjectId): number {
  return idKey(a) < idKey(b) ? -1 : idKey(a) > idKey(b) ? 1 : 0;
}
