/** REST paths and identity strings, built by hand because they sit on the hot path. */
import type { ResourceMapping } from "./types.ts";

/** "apps/v1" → "apps"; "v1" → "" (the core group). */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash === -1 ? "" : apiVersion.slice(0, slash);
}

/** "apps/v1" → "v1"; "v1" → "v1". */
export function versionOf(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash === -1 ? apiVersion : apiVersion.slice(slash + 1);
}

/** group "" + "v1" → "v1"; "apps" + "v1" → "apps/v1". */
export function apiVersionOf(group: string, version: string): string {
  return group === "" ? version : `${group}/${version}`;
}

/**
 * A map key that identifies an object across versions. Slashes cannot occur in a group, kind,
 * namespace or name, so the key is unambiguous.
 */
export function objectKey(group: string, kind: string, namespace: string | undefined, name: string): string {
  return `${group}/${kind}/${namespace ?? ""}/${name}`;
}

/**
 * The URL path of a collection, an object or an object's subresource.
 *
 * A namespace given for a cluster-scoped resource is ignored (callers often pass
 * `obj.metadata.namespace` through), and a namespaced resource without a namespace addresses
 * the collection across all namespaces, which only list and watch accept.
 */
export function resourcePath(
  mapping: ResourceMapping,
  namespace?: string,
  name?: string,
  subresource?: string,
): string {
  let path = mapping.group === "" ? `/api/${mapping.version}` : `/apis/${mapping.group}/${mapping.version}`;
  if (mapping.namespaced && namespace !== undefined && namespace !== "") {
    path += `/namespaces/${encodeURIComponent(namespace)}`;
  } else if (mapping.namespaced && name !== undefined) {
    throw new TypeError(`${mapping.kind} ${name} is namespaced: a namespace is required to address it`);
  }
  path += `/${mapping.resource}`;
  if (name !== undefined) {
    if (name === "") throw new TypeError(`an empty name cannot address a ${mapping.kind}`);
    path += `/${encodeURIComponent(name)}`;
    if (subresource !== undefined) path += `/${subresource}`;
  }
  return path;
}

export type QueryValue = string | number | boolean | undefined;

/** "?a=1&b=x" from the defined entries, or "" when there are none. */
export function encodeQuery(query: Readonly<Record<string, QueryValue>> | undefined): string {
  if (query === undefined) return "";
  let out = "";
  for (const key of Object.keys(query)) {
    const value = query[key];
    if (value === undefined) continue;
    out += `${out === "" ? "?" : "&"}${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`;
  }
  return out;
}
