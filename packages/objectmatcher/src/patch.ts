/**
 * Turns the changes found by the three-way match into a patch the API server accepts:
 * - built-in kinds: a strategic merge patch. Changed keyed-list items are sent with their merge key,
 *   removed ones as `{<key>, $patch: delete}`, removed set members via `$deleteFromPrimitiveList`, and
 *   one-of maps (volume sources, Deployment strategy) carry `$retainKeys` so a switched source clears
 *   the old one. No `$setElementOrder`: order is never something we change.
 * - custom resources: an RFC 7386 merge patch, where `null` deletes and every list is sent whole.
 */
import { ChangeOp } from "./changes.ts";
import type { Change } from "./changes.ts";
import { atomicEqual } from "./equality.ts";
import { isObject, own, setOwn, sortedKeys } from "./json.ts";
import type { JsonArray, JsonObject, JsonScalar, JsonValue } from "./json.ts";
import type { KindInfo } from "./kinds.ts";
import { applyStrategicMergePatch } from "./patch-apply.ts";
import { childSchema, itemKey } from "./schema.ts";
import type { FieldSchema } from "./schema.ts";

export const DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList/";

export function buildPatch(
  changes: readonly Change[],
  kind: KindInfo,
  modified: JsonObject,
  current: JsonObject,
): JsonObject {
  const patch: JsonObject = {};
  for (const change of changes) {
    if (change.op !== ChangeOp.Record) addChange(patch, change, kind.schema, current, modified);
  }
  if (kind.patchType === "merge") return toMergePatch(patch, current, kind.schema);
  addRetainKeys(patch, kind.schema, modified);
  return patch;
}

function addChange(
  patch: JsonObject,
  change: Change,
  rootSchema: FieldSchema,
  current: JsonObject,
  modified: JsonObject,
): void {
  const { path } = change;
  let container: JsonObject = patch;
  let schema: FieldSchema | undefined = rootSchema;
  let live: unknown = current;
  let declared: unknown = modified;
  for (let i = 0; i < path.length; i++) {
    const field = path[i];
    if (typeof field !== "string") return; // list segments are consumed with the field that holds the list
    const fieldSchema = childSchema(schema, field);
    const fieldLive = isObject(live) ? own(live, field) : undefined;
    const fieldDeclared = isObject(declared) ? own(declared, field) : undefined;
    const next = path[i + 1];
    if (next === undefined) {
      // A one-of map drops what we no longer declare through `$retainKeys`; a null beside it is redundant.
      if (change.op === ChangeOp.Remove && schema?.retainKeys && isObject(declared)) return;
      setOwn(
        container,
        field,
        change.op === ChangeOp.Remove ? null : withAdmissionItems(change.after ?? null, fieldSchema, fieldLive),
      );
      return;
    }
    if (typeof next !== "string" && "member" in next) {
      const target = change.op === ChangeOp.Remove ? `${DELETE_FROM_PRIMITIVE_LIST}${field}` : field;
      listAt(container, target).push(next.member);
      return;
    }
    if (typeof next !== "string") {
      const entry = itemEntry(listAt(container, field), next.key);
      if (i + 1 === path.length - 1) {
        if (change.op === ChangeOp.Remove) entry["$patch"] = "delete";
        else if (isObject(change.after)) for (const [k, v] of Object.entries(change.after)) setOwn(entry, k, v);
        return;
      }
      container = entry;
      schema = fieldSchema?.items;
      live = Array.isArray(fieldLive) && fieldSchema ? findItem(fieldLive, next.key, fieldSchema) : undefined;
      declared =
        Array.isArray(fieldDeclared) && fieldSchema ? findItem(fieldDeclared, next.key, fieldSchema) : undefined;
      i++;
      continue;
    }
    const existing = own(container, field);
    const child: JsonObject = isObject(existing) ? existing : {};
    setOwn(container, field, child);
    container = child;
    schema = fieldSchema;
    live = fieldLive;
    declared = fieldDeclared;
  }
}

function listAt(container: JsonObject, field: string): JsonArray {
  const existing = own(container, field);
  if (Array.isArray(existing)) return existing;
  const list: JsonArray = [];
  setOwn(container, field, list);
  return list;
}

function itemEntry(list: JsonArray, key: Readonly<Record<string, JsonScalar>>): JsonObject {
  for (const entry of list) {
    if (isObject(entry) && Object.entries(key).every(([k, v]) => own(entry, k) === v)) return entry;
  }
  const entry: JsonObject = { ...key };
  list.push(entry);
  return entry;
}

function findItem(items: readonly unknown[], key: Readonly<Record<string, JsonScalar>>, schema: FieldSchema): unknown {
  const wanted = itemKey(key, schema);
  return items.find((item) => itemKey(item, schema) === wanted);
}

/** Sending a Pod's tolerations without the ones admission added would ask to remove them. */
function withAdmissionItems(value: JsonValue, schema: FieldSchema | undefined, live: unknown): JsonValue {
  const added = schema?.admissionItems;
  if (!added || !Array.isArray(value) || !Array.isArray(live)) return value;
  const keep = live.filter(
    (item) =>
      added.some((a) => atomicEqual(a, item, schema.items, true)) &&
      !value.some((d) => atomicEqual(d, item, schema.items, true)),
  );
  return [...value, ...(keep as JsonValue[])];
}

/** `$retainKeys` lists the declared keys of each one-of map the patch touches. */
function addRetainKeys(patch: JsonValue, schema: FieldSchema | undefined, declared: JsonValue | undefined): void {
  if (Array.isArray(patch)) {
    if (schema?.list !== "map" || !Array.isArray(declared)) return;
    for (const entry of patch) {
      if (!isObject(entry)) continue;
      const key = itemKey(entry, schema);
      const item = declared.find((d) => itemKey(d, schema) === key);
      addRetainKeys(entry, schema.items, item);
    }
    return;
  }
  if (!isObject(patch)) return;
  if (schema?.retainKeys && isObject(declared) && patch["$patch"] !== "delete") {
    patch["$retainKeys"] = sortedKeys(declared);
  }
  for (const key of Object.keys(patch)) {
    if (key.startsWith("$")) continue;
    addRetainKeys(patch[key] ?? null, childSchema(schema, key), isObject(declared) ? own(declared, key) : undefined);
  }
}

/**
 * JSON merge patch has no list directives: wherever the strategic patch merges into a list (only
 * possible in `metadata` of a custom resource), send the whole merged list instead.
 */
function toMergePatch(patch: JsonObject, current: unknown, schema: FieldSchema | undefined): JsonObject {
  const out: JsonObject = {};
  const live = isObject(current) ? current : {};
  for (const key of Object.keys(patch)) {
    const value = patch[key];
    if (value === undefined) continue;
    const isDeletion = key.startsWith(DELETE_FROM_PRIMITIVE_LIST);
    const field = isDeletion ? key.slice(DELETE_FROM_PRIMITIVE_LIST.length) : key;
    const fieldSchema = childSchema(schema, field);
    if (isDeletion || (Array.isArray(value) && fieldSchema?.list)) {
      if (own(out, field) !== undefined) continue;
      const partial: JsonObject = {};
      for (const k of [field, `${DELETE_FROM_PRIMITIVE_LIST}${field}`]) {
        const v = own(patch, k);
        if (v !== undefined) setOwn(partial, k, v);
      }
      // Computed keys define own properties, `__proto__` included.
      const merged = applyStrategicMergePatch({ [field]: own(live, field) ?? null }, partial, {
        fields: { [field]: fieldSchema ?? {} },
      });
      setOwn(out, field, own(merged, field) ?? null);
    } else if (isObject(value) && fieldSchema?.atomicMap) {
      setOwn(out, key, replacing(own(live, key), value));
    } else if (isObject(value)) {
      setOwn(out, key, toMergePatch(value, own(live, key), fieldSchema));
    } else {
      setOwn(out, key, value);
    }
  }
  return out;
}

/** A merge patch that turns `live` into exactly `declared` (an atomic map: keys others added go). */
function replacing(live: unknown, declared: JsonObject): JsonObject {
  const out: JsonObject = {};
  if (isObject(live)) for (const key of Object.keys(live)) if (own(declared, key) === undefined) setOwn(out, key, null);
  for (const key of Object.keys(declared)) {
    const value = declared[key];
    if (value === undefined) continue;
    setOwn(out, key, isObject(value) ? replacing(isObject(live) ? own(live, key) : undefined, value) : value);
  }
  return out;
}
