/**
 * JSON values as the API server sends and receives them, and the few structural helpers the
 * matcher needs. The matcher works on raw JSON (not typed structs), so everything here treats
 * input as untrusted `unknown` and narrows it with guards.
 */

export type JsonScalar = string | number | boolean | null;
export type JsonValue = JsonScalar | JsonArray | JsonObject;
export type JsonArray = JsonValue[];
export interface JsonObject {
  [key: string]: JsonValue;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/*
 * Every key is data: ConfigMap keys, labels and CRD fields may be named `constructor`, `toString` or
 * `__proto__`. Reading `obj[key]` would find Object.prototype's members, and assigning `obj["__proto__"]`
 * would set the prototype instead of a key; these two helpers are how the package reads and writes keys.
 */

/** `obj[key]` if it is obj's own property, else undefined. */
export function own(obj: object, key: string): JsonValue | undefined {
  return ownEntry<JsonValue>(obj, key);
}

/**
 * `record[key]` if it is record's own entry, for maps whose values are never functions (JSON, schemas).
 * Only an inherited member reads as a function, or `__proto__` as the prototype: the own-property check,
 * which cost the matcher a fifth of its speed when made on every read, is left to those.
 */
export function ownEntry<T>(record: object, key: string): T | undefined {
  const value = (record as Record<string, unknown>)[key];
  if (value === undefined) return undefined;
  if (typeof value === "function" || key === "__proto__") return Object.hasOwn(record, key) ? (value as T) : undefined;
  return value as T;
}

/** `obj[key] = value`, defining `__proto__` as a key of its own rather than setting the prototype. */
export function setOwn<T>(obj: Record<string, T>, key: string, value: T): void {
  if (key === "__proto__")
    Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  else obj[key] = value;
}

/** Own enumerable keys in code-unit order, so every traversal (and every rendering) is stable. */
export function sortedKeys(value: object): string[] {
  // The default sort of strings is code-unit order, as compareStrings, without a call per comparison.
  return Object.keys(value).sort();
}

export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Copies a JSON-shaped value, dropping `undefined` members (as JSON.stringify would) and turning
 * anything that is not JSON (dates, class instances' methods) into its JSON form.
 */
export function cloneJson(value: unknown): JsonValue | undefined {
  if (value === undefined || typeof value === "function" || typeof value === "symbol") return undefined;
  if (value === null || typeof value !== "object") {
    if (typeof value === "bigint") return Number(value);
    if (typeof value === "number" && !Number.isFinite(value)) return null;
    return value as JsonScalar;
  }
  if (Array.isArray(value)) {
    const out: JsonArray = [];
    for (const item of value) out.push(cloneJson(item) ?? null);
    return out;
  }
  if (value instanceof Date) return value.toISOString();
  const out: JsonObject = {};
  for (const key of Object.keys(value)) {
    const child = cloneJson((value as Record<string, unknown>)[key]);
    if (child !== undefined) setOwn(out, key, child);
  }
  return out;
}

/** Structural equality of two JSON values (key order ignored, list order significant). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  if (ka.length !== kb.length) return false;
  for (const key of ka) {
    if (!deepEqual((a as Record<string, unknown>)[key], own(b, key))) return false;
  }
  return true;
}

/** JSON text with object keys sorted: the same object always gives the same bytes. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(canonicalClone(value));
}

/**
 * cloneJson with every object's keys inserted in sorted order, so JSON.stringify of the copy is
 * canonical: one pass instead of a copy to edit and a second, sorted copy to print.
 */
export function canonicalClone(value: unknown): JsonValue | undefined {
  if (value === null || typeof value !== "object") return cloneJson(value);
  if (Array.isArray(value)) {
    const out: JsonArray = [];
    for (const item of value) out.push(canonicalClone(item) ?? null);
    return out;
  }
  if (value instanceof Date) return value.toISOString();
  const out: JsonObject = {};
  for (const key of sortedKeys(value)) {
    const child = canonicalClone((value as Record<string, unknown>)[key]);
    if (child !== undefined) setOwn(out, key, child);
  }
  return out;
}
