/**
 * Taking over objects Config Sync applied. Config Sync server-side applies with the field manager
 * `configsync.gke.io` and keeps no last-applied record, so without one driftless could not tell a
 * field removed from Git from a field someone else added, and would never remove it. What Config
 * Sync last applied is in the object's managedFields: the fields its Apply entry owns. Reading the
 * live values at exactly those fields gives the record Config Sync would have written, and the
 * three-way match then runs as on any object driftless applied: a field still owned there and gone
 * from Git is removed, and an object whose declared fields all hold their declared values is not
 * written (a switch from Config Sync costs a GET per object, not a write).
 */
import { ConfigSyncFieldManager, ConfigSyncOnlyAnnotation, ManagedAnnotation } from "@driftless/api";
import type { KubeObject } from "@driftless/kube";
import type { Annotator } from "@driftless/objectmatcher";
import type { JsonObject } from "./desired.ts";

/** A server-side-apply field set (fieldsV1): `f:<field>`, `k:<key json>`, `v:<value json>`, `i:<index>`, `.`. */
type FieldSet = { readonly [key: string]: FieldSet };

interface ManagedFieldsEntry {
  readonly manager?: string;
  readonly operation?: string;
  readonly subresource?: string;
  readonly fieldsType?: string;
  readonly fieldsV1?: FieldSet;
}

/**
 * Config Sync metadata driftless does not write (the webhook's declared-fields, the legacy
 * declared-config, the cluster name): left on the object rather than removed, so adopting an object
 * does not rewrite it for them.
 */
const keptAnnotations: readonly string[] = [
  ConfigSyncOnlyAnnotation.DeclaredFields,
  ConfigSyncOnlyAnnotation.DeclaredConfig,
  "configmanagement.gke.io/cluster-name",
];

/** The fields Config Sync's applies own on `live` (every apiVersion's entry), or undefined when it owns none. */
function configSyncFields(live: KubeObject): FieldSet | undefined {
  const entries = (live.metadata as { managedFields?: readonly ManagedFieldsEntry[] }).managedFields ?? [];
  let fields: FieldSet | undefined;
  for (const entry of entries) {
    if (entry.manager !== ConfigSyncFieldManager || entry.operation !== "Apply") continue;
    if ((entry.subresource ?? "") !== "" || entry.fieldsV1 === undefined) continue;
    fields = fields === undefined ? entry.fieldsV1 : unionFields(fields, entry.fieldsV1);
  }
  return fields;
}

function unionFields(a: FieldSet, b: FieldSet): FieldSet {
  const out: { [key: string]: FieldSet } = { ...a };
  for (const [key, child] of Object.entries(b))
    out[key] = Object.hasOwn(out, key) ? unionFields(out[key] ?? {}, child) : child;
  return out;
}

/**
 * What Config Sync last applied to `live`, as a last-applied record: the live values at the fields
 * its Apply entry owns, with the object's identity. Undefined when Config Sync owns nothing on it
 * (or when `live` came without managedFields, as watch caches keep objects).
 */
export function configSyncAppliedRecord(live: KubeObject): JsonObject | undefined {
  const fields = configSyncFields(live);
  if (fields === undefined) return undefined;
  const projected = projectMap(fields, live as unknown as JsonObject);
  const metadata = (projected["metadata"] ?? {}) as JsonObject;
  const annotations = metadata["annotations"] as JsonObject | undefined;
  if (annotations !== undefined) for (const key of keptAnnotations) delete annotations[key];
  return {
    ...projected,
    apiVersion: live.apiVersion,
    kind: live.kind,
    metadata: {
      ...metadata,
      name: live.metadata.name,
      ...(live.metadata.namespace === undefined ? {} : { namespace: live.metadata.namespace }),
    },
  };
}

/** A field set that owns only the field itself (`{}` or `{".": {}}`): its whole value is owned. */
function isWhole(fields: FieldSet): boolean {
  return Object.keys(fields).every((key) => key === ".");
}

function project(fields: FieldSet, live: unknown): unknown {
  if (isWhole(fields)) return structuredClone(live);
  if (Array.isArray(live)) return projectList(fields, live);
  if (isObject(live)) return projectMap(fields, live);
  return structuredClone(live);
}

function projectMap(fields: FieldSet, live: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(fields)) {
    if (!key.startsWith("f:")) continue;
    const name = key.slice(2);
    // Gone from the live object since (removed by someone else): nothing of it to remove. A key is data,
    // whatever its name (`toString`, `__proto__`): own properties only, defined rather than assigned.
    if (!Object.hasOwn(live, name) || live[name] === undefined) continue;
    Object.defineProperty(out, name, {
      value: project(child, live[name]),
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return out;
}

/** Owned items of a list, in live order: by merge key (`k:`), by value (`v:`, sets) or by index (`i:`). */
function projectList(fields: FieldSet, live: readonly unknown[]): unknown[] {
  const keyed: { key: JsonObject; fields: FieldSet }[] = [];
  const values: unknown[] = [];
  const indexed = new Map<number, FieldSet>();
  for (const [key, child] of Object.entries(fields)) {
    const parsed = parseMember(key);
    if (parsed === undefined) continue;
    if (key.startsWith("k:") && isObject(parsed)) keyed.push({ key: parsed, fields: child });
    else if (key.startsWith("v:")) values.push(parsed);
    else if (key.startsWith("i:") && typeof parsed === "number") indexed.set(parsed, child);
  }
  const out: unknown[] = [];
  live.forEach((item, index) => {
    const byKey = keyed.find(
      (k) => isObject(item) && Object.entries(k.key).every(([f, v]) => Object.hasOwn(item, f) && deepEqual(item[f], v)),
    );
    if (byKey !== undefined) {
      // The key fields identify the item: they belong in the record whatever the entry lists.
      const rest = project(byKey.fields, item);
      out.push(isObject(rest) ? { ...rest, ...structuredClone(byKey.key) } : rest);
    } else if (values.some((v) => deepEqual(item, v))) out.push(structuredClone(item));
    else if (indexed.has(index)) out.push(project(indexed.get(index) ?? {}, item));
  });
  return out;
}

function parseMember(key: string): unknown {
  if (!(key.startsWith("k:") || key.startsWith("v:") || key.startsWith("i:"))) return undefined;
  try {
    return JSON.parse(key.slice(2)) as unknown;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

/**
 * True when `live` says this sync manages it (`configsync.gke.io/manager`) yet carries no
 * driftless record: Config Sync applied it, and its field ownership (not kept in watch caches) is
 * worth a read. `root-sync` and `repo-sync` of one kind and namespace share a manager value, so
 * given this sync's inventory id, an object another inventory owns is not this sync's to adopt.
 */
export function awaitsAdoption(live: KubeObject, recordKey: string, manager: string, inventory?: string): boolean {
  const annotations = live.metadata.annotations ?? {};
  if (annotations[recordKey] !== undefined || annotations[ManagedAnnotation.Manager] !== manager) return false;
  const owner = annotations[ManagedAnnotation.OwningInventory];
  return inventory === undefined || owner === undefined || owner === "" || owner === inventory;
}

/**
 * `fresh` (read with its managedFields) carrying what Config Sync last applied as its driftless
 * record, for the three-way match; `fresh` as it is when Config Sync owns nothing on it. The record
 * is never written unless the match finds a change: a write stores the declaration's own.
 */
export function withAdoptedRecord(fresh: KubeObject | undefined, annotator: Annotator): KubeObject | undefined {
  if (fresh === undefined) return undefined;
  const record = configSyncAppliedRecord(fresh);
  const metadata: KubeObject["metadata"] = { ...fresh.metadata, managedFields: undefined };
  if (record !== undefined) {
    try {
      metadata.annotations = {
        ...fresh.metadata.annotations,
        [annotator.annotationKey]: annotator.encodeRecord(record),
      };
    } catch {
      // Too large to record: matched without a record, as before adoption existed.
    }
  }
  return { ...fresh, metadata };
}
