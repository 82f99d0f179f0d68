/**
 * Normalisation: make a declaration look the way the API server would store it, so that nothing that
 * the server merely re-spells is ever reported as a change.
 *
 * - `null`, `""` and `[]` are what Go's `omitempty` drops, so they mean "not declared"
 *   (`creationTimestamp: null`, `args: []`); so does a map with nothing set inside (`resources: {}`),
 *   though it is kept for patches (see pruneValue). The exception is a string map (labels,
 *   annotations, ConfigMap/Secret data) or a list element, where an empty string is a value.
 * - A custom resource is stored as sent (no Go struct): outside its typed `metadata` only `null` means
 *   "not declared", and `""` and `[]` are values (`storedAsSent`).
 * - Secret `stringData` is write-only: the server merges it into `data` as base64 and never returns it.
 * - Base64 bytes come back canonically encoded (no line breaks, padded).
 * - Defaults that are part of an item's identity are filled in (`protocol: TCP` on ports).
 * - Server-owned metadata (uid, resourceVersion, generation, creationTimestamp, managedFields, …)
 *   and, by default, `status` are never ours to compare.
 */
import { Buffer } from "node:buffer";
import { isObject, own, setOwn } from "./json.ts";
import type { JsonArray, JsonObject, JsonValue } from "./json.ts";
import type { KindInfo } from "./kinds.ts";
import { childSchema } from "./schema.ts";
import type { FieldSchema } from "./schema.ts";

/** Metadata only the API server writes; never compared, never recorded. */
export const SERVER_METADATA_FIELDS = [
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "managedFields",
  "selfLink",
] as const;

/** A nested field path: `"spec.replicas"`, or segments (needed when a key contains a dot); `*` matches any key or item. */
export type FieldPath = string | readonly string[];

export interface NormalizeContext {
  readonly kind: KindInfo;
  /** Our last-applied annotation: part of the bookkeeping, not of the declaration. */
  readonly annotationKey: string;
  readonly ignoreStatus: boolean;
  readonly ignoreFields: readonly (readonly string[])[];
}

export function toSegments(path: FieldPath): readonly string[] {
  return typeof path === "string" ? path.split(".").filter((s) => s !== "") : path;
}

/** A normalised copy of a whole object; the input is never modified. */
export function normalizeObject(input: JsonObject, ctx: NormalizeContext): JsonObject {
  const source =
    ctx.kind.builtIn && ctx.kind.group === "" && ctx.kind.kind === "Secret" ? mergeStringData(input) : input;
  const schema = ctx.kind.schema;
  const root: JsonObject = {};
  for (const key of Object.keys(source)) {
    if (key === "status" && ctx.ignoreStatus) continue;
    const child = childSchema(schema, key);
    const value =
      key === "metadata"
        ? pruneMetadata(source[key], child, ctx.annotationKey)
        : pruneValue(source[key], child, false, !ctx.kind.builtIn);
    if (value !== undefined) setOwn(root, key, value);
  }
  for (const path of ctx.ignoreFields) removePath(root, path, 0);
  return root;
}

const SERVER_METADATA = new Set<string>(SERVER_METADATA_FIELDS);

/** Metadata without what only the server writes and without our own bookkeeping annotation. */
function pruneMetadata(value: unknown, schema: FieldSchema | undefined, annotationKey: string): JsonValue | undefined {
  if (!isObject(value)) return pruneValue(value, schema);
  const out: JsonObject = {};
  for (const key of Object.keys(value)) {
    if (SERVER_METADATA.has(key)) continue;
    let child = value[key];
    if (key === "annotations" && isObject(child) && Object.hasOwn(child, annotationKey)) {
      child = { ...child };
      delete child[annotationKey];
    }
    const pruned = pruneValue(child, childSchema(schema, key));
    if (pruned !== undefined) setOwn(out, key, pruned);
  }
  return out;
}

/**
 * The value as the API server would hold it, or `undefined` when it amounts to "not set".
 * Always returns fresh containers, so callers may modify the result.
 *
 * Empty maps are kept: `podSelector: {}`, `namespaceSelector: {}` and `emptyDir: {}` mean something,
 * and a patch or record must not lose them. Comparison treats them as "nothing declared inside"
 * instead (see {@link isAbsent}). List elements are kept as they are: `apiGroups: [""]` is the core
 * group and `ingress: [{}]` allows everything.
 */
export function pruneValue(
  value: unknown,
  schema: FieldSchema | undefined,
  inList = false,
  storedAsSent = false,
): JsonValue | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === "string") {
    if (value === "") return inList || storedAsSent || schema?.keepEmpty ? "" : undefined;
    return schema?.base64 ? canonicalBase64(value) : value;
  }
  if (typeof value === "number" || typeof value === "boolean") return value;
  if (Array.isArray(value)) {
    const items: JsonArray = [];
    const itemSchema = schema?.items;
    for (const item of value) {
      const pruned = pruneValue(item, itemSchema, true, storedAsSent);
      if (pruned !== undefined) items.push(pruned);
    }
    return items.length === 0 && !storedAsSent ? undefined : items;
  }
  if (typeof value !== "object") return undefined;
  if (value instanceof Date) return value.toISOString();
  const out: JsonObject = {};
  let empty = true;
  for (const key of Object.keys(value)) {
    const pruned = pruneValue(
      (value as Record<string, unknown>)[key],
      schema === undefined ? undefined : childSchema(schema, key),
      false,
      storedAsSent,
    );
    if (pruned !== undefined) {
      setOwn(out, key, pruned);
      empty = false;
    }
  }
  // A Go map (labels, data, resource lists) is omitted when empty; only structs keep `{}`.
  if (empty && schema?.values && !storedAsSent) return undefined;
  const defaults = schema?.defaults;
  if (defaults && !empty)
    for (const key of Object.keys(defaults)) if (own(out, key) === undefined) setOwn(out, key, defaults[key] ?? null);
  return out;
}

/**
 * Is this value "not set" for comparison? `null`, `""` (outside string maps), empty lists and maps
 * with nothing set inside: what Go's `omitempty` drops, or what declares nothing. In a custom
 * resource (`storedAsSent`) `""` and `[]` are stored values. Reads the live object in place.
 */
export function isAbsent(value: unknown, schema: FieldSchema | undefined, storedAsSent = false): boolean {
  if (value === undefined || value === null) return true;
  if (value === "") return !(storedAsSent || schema?.keepEmpty);
  if (typeof value !== "object") return false;
  if (schema?.presence) return false;
  if (Array.isArray(value)) {
    if (storedAsSent) return false;
    for (const item of value) if (item !== null && item !== undefined) return false;
    return true;
  }
  for (const key of Object.keys(value)) {
    if (!isAbsent((value as Record<string, unknown>)[key], childSchema(schema, key), storedAsSent)) return false;
  }
  return true;
}

const BASE64 = /^[A-Za-z0-9+/=\s]*$/;

/** Go decodes `[]byte` from standard base64 (tolerating line breaks) and re-encodes it canonically. */
export function canonicalBase64(value: string): string {
  if (!BASE64.test(value)) return value;
  const compact = value.replace(/\s+/g, "");
  return Buffer.from(compact, "base64").toString("base64");
}

/** What the API server does with a Secret's `stringData`: encode each entry into `data`, stringData winning. */
function mergeStringData(secret: JsonObject): JsonObject {
  const stringData = secret["stringData"];
  if (!isObject(stringData)) return secret;
  const data: JsonObject = isObject(secret["data"]) ? { ...secret["data"] } : {};
  for (const [key, value] of Object.entries(stringData)) {
    if (typeof value === "string") setOwn(data, key, Buffer.from(value, "utf8").toString("base64"));
  }
  const out: JsonObject = { ...secret, data };
  delete out["stringData"];
  return out;
}

function removePath(value: JsonValue | undefined, path: readonly string[], index: number): void {
  const segment = path[index];
  if (segment === undefined || value === null || typeof value !== "object") return;
  const last = index === path.length - 1;
  if (Array.isArray(value)) {
    if (segment === "*") {
      if (last) value.length = 0;
      else for (const item of value) removePath(item, path, index + 1);
    } else if (/^\d+$/.test(segment)) {
      const position = Number(segment);
      if (last) value.splice(position, 1);
      else removePath(value[position], path, index + 1);
    }
    return;
  }
  const keys = segment === "*" ? Object.keys(value) : Object.hasOwn(value, segment) ? [segment] : [];
  for (const key of keys) {
    if (last) delete value[key];
    else removePath(value[key], path, index + 1);
  }
}
