/**
 * The JSON patch (RFC 6902) that turns one object into another: objects are compared key by key, any
 * other differing value (an array included) is replaced whole. Small, and exact: applied to `from` it
 * gives `to`, which is all a write over a known copy needs.
 */
export type JsonPatchOp =
  | { readonly op: "add" | "replace"; readonly path: string; readonly value: unknown }
  | { readonly op: "remove"; readonly path: string };

export function jsonPatch(from: unknown, to: unknown, path = ""): JsonPatchOp[] {
  if (isObject(from) && isObject(to)) {
    const ops: JsonPatchOp[] = [];
    // Own keys only: `in` would find "constructor" or "toString" on the prototype of any object. A key set
    // to undefined is absent in JSON (a watch cache's copy drops managedFields so): removing it is a 422.
    for (const key of Object.keys(from)) {
      if (from[key] === undefined) continue;
      if (!Object.hasOwn(to, key) || to[key] === undefined) ops.push({ op: "remove", path: `${path}/${pointer(key)}` });
    }
    for (const [key, value] of Object.entries(to)) {
      if (value === undefined) continue;
      const at = `${path}/${pointer(key)}`;
      if (!Object.hasOwn(from, key) || from[key] === undefined) ops.push({ op: "add", path: at, value });
      // One by one: spread into push's arguments, ~120,000 changes overflow the stack.
      else for (const op of jsonPatch(from[key], value, at)) ops.push(op);
    }
    return ops;
  }
  return sameJson(from, to) ? [] : [{ op: "replace", path, value: to }];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A key as one JSON Pointer segment (RFC 6901): `~` and `/` escaped. */
function pointer(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a).filter((k) => a[k] !== undefined);
    return (
      keys.length === Object.keys(b).filter((k) => b[k] !== undefined).length && keys.every((k) => sameJson(a[k], b[k]))
    );
  }
  return false;
}
