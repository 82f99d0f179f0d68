/**
 * Applies the patches this package produces, the way the API server would: the subset of strategic
 * merge patch we emit (`$patch: delete|replace`, `$retainKeys`, `$deleteFromPrimitiveList`, keyed and
 * set-like list merges, `$setElementOrder` tolerated and ignored) and RFC 7386 JSON merge patch.
 * Used to check that a patch really brings the live object to the declared state, and by callers
 * that want to preview the result; it never modifies its inputs.
 */
import { cloneJson, deepEqual, isObject, own, setOwn } from "./json.ts";
import type { JsonArray, JsonObject, JsonValue } from "./json.ts";
import { childSchema, hasDuplicateKeys, itemKey } from "./schema.ts";
import type { FieldSchema } from "./schema.ts";

const DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList/";
const SET_ELEMENT_ORDER = "$setElementOrder/";

export function applyMergePatch(target: unknown, patch: JsonValue): JsonValue {
  if (!isObject(patch)) return cloneJson(patch) ?? null;
  // Spread copies own keys as keys, `__proto__` included; reads and writes go through own/setOwn.
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const key of Object.keys(patch)) {
    const value = patch[key];
    if (value === undefined) continue;
    if (value === null) delete out[key];
    else setOwn(out, key, applyMergePatch(own(out, key), value));
  }
  return out;
}

export function applyStrategicMergePatch(
  target: unknown,
  patch: JsonObject,
  schema: FieldSchema | undefined,
): JsonObject {
  return applyMap(target, patch, schema) ?? {};
}

function applyMap(target: unknown, patch: JsonObject, schema: FieldSchema | undefined): JsonObject | undefined {
  const directive = patch["$patch"];
  if (directive === "delete") return undefined;
  if (directive === "replace") {
    const replaced = cloneJson(patch) as JsonObject;
    delete replaced["$patch"];
    return replaced;
  }
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const key of Object.keys(patch)) {
    const value = patch[key];
    if (value === undefined || key === "$patch" || key === "$retainKeys" || key.startsWith(SET_ELEMENT_ORDER)) continue;
    if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) continue;
    if (value === null) {
      delete out[key];
      continue;
    }
    const fieldSchema = childSchema(schema, key);
    if (Array.isArray(value)) setOwn(out, key, applyList(own(out, key), value, fieldSchema));
    else if (isObject(value)) {
      const merged = applyMap(own(out, key), value, fieldSchema);
      if (merged === undefined) delete out[key];
      else setOwn(out, key, merged);
    } else setOwn(out, key, value);
  }
  for (const key of Object.keys(patch)) {
    const members = patch[key];
    if (!key.startsWith(DELETE_FROM_PRIMITIVE_LIST) || !Array.isArray(members)) continue;
    const field = key.slice(DELETE_FROM_PRIMITIVE_LIST.length);
    const list = own(out, field);
    if (Array.isArray(list))
      setOwn(
        out,
        field,
        list.filter((item) => !members.some((m) => deepEqual(m, item))),
      );
  }
  const retain = patch["$retainKeys"];
  if (Array.isArray(retain)) {
    for (const key of Object.keys(out)) if (!retain.includes(key)) delete out[key];
  }
  return out;
}

function applyList(target: unknown, patch: JsonArray, schema: FieldSchema | undefined): JsonArray {
  if (schema?.list === "set") {
    const out: JsonArray = Array.isArray(target) ? [...(target as JsonArray)] : [];
    for (const member of patch) if (!out.some((m) => deepEqual(m, member))) out.push(member);
    return out;
  }
  // Items sharing a key cannot merge by it: such a list was compared whole (three-way.ts) and goes whole.
  if (schema?.list !== "map" || hasDuplicateKeys(patch, schema)) return cloneJson(patch) as JsonArray;
  const out: JsonArray = Array.isArray(target) ? [...(target as JsonArray)] : [];
  for (const entry of patch) {
    if (!isObject(entry)) continue;
    const key = itemKey(entry, schema);
    const index = key === undefined ? -1 : out.findIndex((item) => itemKey(item, schema) === key);
    const merged = applyMap(index >= 0 ? out[index] : undefined, entry, schema.items);
    if (index >= 0) {
      if (merged === undefined) out.splice(index, 1);
      else out[index] = merged;
    } else if (merged !== undefined) {
      out.push(merged);
    }
  }
  return out;
}
