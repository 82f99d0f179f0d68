/**
 * Which declared fields an update changes. Config Sync keeps the declared fields in the
 * `configsync.gke.io/declared-fields` annotation; driftless keeps the declaration itself (its
 * last-applied record), so the declared fields are the record's leaves. A leaf whose value differs
 * between the old and new object is a change, whatever the declaration says (drift already there
 * is the reconciler's to correct, not the webhook's to refuse). Paths are written as Config Sync
 * writes them: `.data.key`, `[name="web"]` for an item of a keyed list, `[=value]` for a set member.
 */
import { isDeepStrictEqual } from "node:util";
import { resolveKind, type FieldSchema } from "@driftless/objectmatcher";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonMap = { [key: string]: Json };

function isMap(value: unknown): value is JsonMap {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The declared paths (of `record`) whose values differ between `oldObj` and `newObj`. */
export function changedDeclaredFields(record: JsonMap, oldObj: JsonMap, newObj: JsonMap): string[] {
  const apiVersion = typeof oldObj["apiVersion"] === "string" ? oldObj["apiVersion"] : undefined;
  const kind = typeof oldObj["kind"] === "string" ? oldObj["kind"] : undefined;
  const schema = resolveKind(apiVersion, kind).schema;
  const changed: string[] = [];
  for (const [key, declared] of Object.entries(record)) {
    // apiVersion and kind name the object; a request in another version of the same kind is no change.
    if (key === "apiVersion" || key === "kind") continue;
    walk(declared, oldObj[key], newObj[key], schema.fields?.[key], `.${key}`, changed);
  }
  return changed;
}

function walk(
  declared: Json,
  oldValue: Json | undefined,
  newValue: Json | undefined,
  schema: FieldSchema | undefined,
  path: string,
  changed: string[],
): void {
  if (isMap(declared) && Object.keys(declared).length > 0 && schema?.atomicMap !== true) {
    const oldMap = isMap(oldValue) ? oldValue : {};
    const newMap = isMap(newValue) ? newValue : {};
    for (const [key, child] of Object.entries(declared)) {
      walk(child, oldMap[key], newMap[key], schema?.fields?.[key] ?? schema?.values, `${path}.${key}`, changed);
    }
    return;
  }
  if (Array.isArray(declared) && schema?.list === "map" && schema.keys !== undefined && schema.keys.length > 0) {
    walkKeyedList(declared, oldValue, newValue, schema, path, changed);
    return;
  }
  if (Array.isArray(declared) && schema?.list === "set") {
    const oldSet = Array.isArray(oldValue) ? oldValue : [];
    const newSet = Array.isArray(newValue) ? newValue : [];
    for (const member of declared) {
      const had = oldSet.some((v) => isDeepStrictEqual(v, member));
      const has = newSet.some((v) => isDeepStrictEqual(v, member));
      if (had !== has) changed.push(`${path}[=${JSON.stringify(member)}]`);
    }
    return;
  }
  // A leaf, an atomic list or an empty map: compared whole.
  if (!isDeepStrictEqual(oldValue, newValue)) changed.push(path);
}

function walkKeyedList(
  declared: Json[],
  oldValue: Json | undefined,
  newValue: Json | undefined,
  schema: FieldSchema,
  path: string,
  changed: string[],
): void {
  const keys = schema.keys ?? [];
  const oldItems = Array.isArray(oldValue) ? oldValue : [];
  const newItems = Array.isArray(newValue) ? newValue : [];
  for (const item of declared) {
    if (!isMap(item)) {
      if (!isDeepStrictEqual(oldValue, newValue)) changed.push(path);
      return;
    }
    // Items are matched by the keys the declaration gives (a declared port may leave `protocol` to its default).
    const given = keys.filter((k) => item[k] !== undefined);
    const find = (items: Json[]): Json | undefined =>
      items.find((candidate) => isMap(candidate) && given.every((k) => isDeepStrictEqual(candidate[k], item[k])));
    const label = `[${given.map((k) => `${k}=${JSON.stringify(item[k])}`).join(",")}]`;
    walk(item, find(oldItems), find(newItems), schema.items, `${path}${label}`, changed);
  }
}

/** A server-side-apply field set (fieldsV1): `f:<field>`, `k:<key json>`, `v:<value json>`, `i:<index>`, `.`. */
export type FieldSet = { readonly [key: string]: FieldSet };

/**
 * The paths of `fields` (Config Sync's `configsync.gke.io/declared-fields`, on objects it applied and
 * driftless adopted without rewriting them) whose values differ between `oldObj` and `newObj`.
 */
export function changedFieldSet(fields: FieldSet, oldObj: JsonMap, newObj: JsonMap): string[] {
  const changed: string[] = [];
  walkFields(fields, oldObj, newObj, "", changed);
  return changed;
}

function walkFields(
  fields: FieldSet,
  oldValue: Json | undefined,
  newValue: Json | undefined,
  path: string,
  changed: string[],
): void {
  const children = Object.entries(fields).filter(([key]) => key !== ".");
  // A leaf (`{}`), or a node owned whole: compared whole.
  if (children.length === 0) {
    if (!isDeepStrictEqual(oldValue, newValue)) changed.push(path);
    return;
  }
  for (const [key, child] of children) {
    const kind = key.slice(0, 2);
    const rest = key.slice(2);
    if (kind === "f:") {
      if (path === "" && (rest === "apiVersion" || rest === "kind")) continue;
      const pick = (v: Json | undefined): Json | undefined => (isMap(v) ? v[rest] : undefined);
      walkFields(child, pick(oldValue), pick(newValue), `${path}.${rest}`, changed);
      continue;
    }
    let parsed: Json;
    try {
      parsed = JSON.parse(rest) as Json;
    } catch {
      continue;
    }
    const oldItems = Array.isArray(oldValue) ? oldValue : [];
    const newItems = Array.isArray(newValue) ? newValue : [];
    if (kind === "k:" && isMap(parsed)) {
      const key = parsed;
      const find = (items: Json[]): Json | undefined =>
        items.find((item) => isMap(item) && Object.entries(key).every(([k, v]) => isDeepStrictEqual(item[k], v)));
      const label = `[${Object.entries(key)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(",")}]`;
      walkFields(child, find(oldItems), find(newItems), `${path}${label}`, changed);
    } else if (kind === "v:") {
      const had = oldItems.some((v) => isDeepStrictEqual(v, parsed));
      const has = newItems.some((v) => isDeepStrictEqual(v, parsed));
      if (had !== has) changed.push(`${path}[=${JSON.stringify(parsed)}]`);
    } else if (kind === "i:" && typeof parsed === "number") {
      walkFields(child, oldItems[parsed], newItems[parsed], `${path}[${parsed}]`, changed);
    }
  }
}
