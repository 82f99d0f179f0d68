/**
 * Equality of a declared value with a live one, as the API server sees them. Built-in kinds pass
 * through Go structs on the server, which re-spell values without changing them; custom resources
 * are stored as sent, so they compare exactly.
 */
import { isObject, own } from "./json.ts";
import type { JsonArray, JsonScalar, JsonValue } from "./json.ts";
import { canonicalBase64, isAbsent } from "./normalize.ts";
import { quantitiesEqual } from "./quantity.ts";
import { childSchema, filledAt, namedField, serverFilledTree } from "./schema.ts";
import type { FieldSchema, ServerFilledTree } from "./schema.ts";

/**
 * A declared scalar against a live value. For built-in kinds: quantities compare by value, an
 * int-or-string compares `8080` with `"8080"`, and base64 bytes compare canonically.
 */
export function scalarEqual(
  declared: JsonScalar,
  live: unknown,
  schema: FieldSchema | undefined,
  builtIn: boolean,
): boolean {
  if (declared === live) return true;
  if (!builtIn) return false;
  if (schema?.quantity) return quantitiesEqual(declared, live);
  if (schema?.base64 && typeof declared === "string" && typeof live === "string")
    return canonicalBase64(live) === declared;
  if (!schema?.intOrString) return false;
  if (typeof declared === "number" && typeof live === "string") return String(declared) === live;
  if (typeof declared === "string" && typeof live === "number") return declared === String(live);
  return false;
}

/**
 * A declared value the live object does not have at all. A map with nothing set inside declares
 * nothing. Go drops `false` and `0` from non-pointer fields (`omitsZero`), so there a declared zero is
 * satisfied by its absence; a pointer field keeps an explicit zero, and its absence means something
 * else (an unset `allowPrivilegeEscalation` allows escalation), so there the zero must be written.
 */
export function satisfiedByAbsence(declared: JsonValue, schema: FieldSchema | undefined, builtIn: boolean): boolean {
  if (declared === null || Array.isArray(declared)) return isAbsent(declared, schema, !builtIn);
  if (typeof declared === "object") {
    if (schema?.presence) return false;
    for (const key of Object.keys(declared)) {
      if (!satisfiedByAbsence(declared[key] ?? null, childSchema(schema, key), builtIn)) return false;
    }
    return true;
  }
  if (declared === "") return builtIn && !schema?.keepEmpty;
  return builtIn && schema?.omitsZero === true && (declared === false || declared === 0);
}

/**
 * Whole-value comparison, used for atomic lists (and everything inside them): every declared value
 * must be live and nothing else may be live, except what the API server fills in (`serverFilled`, a
 * custom resource's schema `default`) and items admission appended (`admissionItems`), when those
 * were not declared.
 */
export function atomicEqual(
  declared: JsonValue,
  live: unknown,
  schema: FieldSchema | undefined,
  builtIn: boolean,
  filled?: ServerFilledTree,
): boolean {
  if (Array.isArray(declared)) {
    if (!Array.isArray(live)) return false;
    const liveItems = withoutAdmissionItems(declared, live, schema, builtIn);
    if (liveItems.length !== declared.length) return false;
    const itemSchema = schema?.items;
    const itemFilled = serverFilledTree(itemSchema);
    for (let i = 0; i < declared.length; i++) {
      if (!atomicEqual(declared[i] ?? null, liveItems[i], itemSchema, builtIn, itemFilled)) return false;
    }
    return true;
  }
  if (isObject(declared)) {
    if (!isObject(live)) return false;
    for (const key of Object.keys(declared)) {
      const d = declared[key];
      if (d === undefined || (schema?.prunesUnknown && namedField(schema, key) === undefined)) continue;
      const l = own(live, key);
      const sub = filledAt(filled, key);
      const child = childSchema(schema, key);
      if (isAbsent(l, child, !builtIn)) {
        if (!satisfiedByAbsence(d, child, builtIn)) return false;
      } else if (!atomicEqual(d, l, child, builtIn, sub === true ? undefined : sub)) return false;
    }
    for (const key of Object.keys(live)) {
      if (own(declared, key) !== undefined || filledAt(filled, key) === true) continue;
      const child = childSchema(schema, key);
      if (!isAbsent(live[key], child, !builtIn) && !isSchemaDefault(live[key], child, builtIn)) return false;
    }
    return true;
  }
  return !isObject(live) && !Array.isArray(live) && scalarEqual(declared, live, schema, builtIn);
}

/**
 * Is a live value what a custom resource's schema default fills in (nested defaults applied, as the
 * server applies them inside a defaulted object)? Then it is the server's, not a value someone set.
 */
export function isSchemaDefault(live: unknown, schema: FieldSchema | undefined, builtIn: boolean): boolean {
  const value = schema?.default;
  return value !== undefined && atomicEqual(value, live, schema, builtIn);
}

/** Live items minus admission-appended ones that were not declared (e.g. a Pod's default tolerations). */
export function withoutAdmissionItems(
  declared: JsonArray,
  live: readonly unknown[],
  schema: FieldSchema | undefined,
  builtIn: boolean,
): readonly unknown[] {
  const extra = schema?.admissionItems;
  const presentItems = live.filter((item) => item !== null && item !== undefined);
  if (!extra) return presentItems;
  return presentItems.filter(
    (item) =>
      !extra.some((added) => atomicEqual(added, item, schema?.items, builtIn)) ||
      declared.some((d) => atomicEqual(d, item, schema?.items, builtIn)),
  );
}
