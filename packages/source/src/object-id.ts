import type { ObjMetadata } from "@driftless/api";

/**
 * Object identity: group ("" for core), kind, namespace ("" for cluster-scoped) and name, the tuple
 * Config Sync uses for ResourceGroup inventories, duplicate detection and depends-on references. The
 * version is deliberately not part of it: one object served at two versions is still one object.
 * The same shape as @driftless/api's ObjMetadata (a ResourceGroup `spec.resources[]` entry).
 */
export type ObjectId = ObjMetadata;

/**
 * A stable string key for an id, in the depends-on reference syntax (`group/namespaces/ns/Kind/name` or
 * `group/Kind/name`), so keys read the same as the references users write. It is unambiguous because
 * no part of a valid id contains "/".
 */
export function objectKey(id: ObjectId): string {
  return id.namespace === ""
    ? `${id.group}/${id.kind}/${id.name}`
    : `${id.group}/namespaces/${id.namespace}/${id.kind}/${id.name}`;
}

/** `Kind "ns/name"` for messages. */
export function describeObject(id: {
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
}): string {
  const kind = id.kind || "object";
  if (id.name === "") return `${kind} (no name)`;
  return `${kind} "${id.namespace ? `${id.namespace}/${id.name}` : id.name}"`;
}
