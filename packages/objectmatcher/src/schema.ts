/**
 * The small slice of a schema the matcher needs: which lists merge by key (and by which key), which
 * maps hold free-form strings or quantities, what absence means, and which values the API server fills
 * in inside lists that otherwise compare whole. Built-in kinds get theirs from Kubernetes' Go types
 * (`facts.ts`), custom resources from their CRD's OpenAPI schema (`openapi.ts`). Anything not described
 * is a plain map or an atomic list, which is what strategic merge patch does with untagged fields.
 */
import { own, ownEntry, setOwn } from "./json.ts";
import type { JsonObject, JsonScalar, JsonValue } from "./json.ts";

export const ListType = {
  /** Items merge by key (`patchStrategy: merge` + `patchMergeKey`); order is not meaningful. */
  Map: "map",
  /** A list of scalars with `patchStrategy: merge`: a set, others may add members. */
  Set: "set",
} as const;
export type ListType = (typeof ListType)[keyof typeof ListType];

export interface FieldSchema {
  /** Known child fields of a map. */
  readonly fields?: Readonly<Record<string, FieldSchema>>;
  /** Schema of every value of a map with free-form keys (labels, resource lists). */
  readonly values?: FieldSchema;
  /** Schema of every item of a list. */
  readonly items?: FieldSchema;
  /** How a list merges; absent means atomic (compared and replaced whole). */
  readonly list?: ListType;
  /** Merge keys of a `map` list; the first is the strategic-merge `patchMergeKey`. */
  readonly keys?: readonly string[];
  /**
   * A custom resource's schema `default`: the API server fills it in when the field is absent (structural
   * defaulting, on every write and read), so a live value equal to it that was not declared is the server's.
   */
  readonly default?: JsonValue;
  /** Defaults the API server fills into a map when absent; filled into declarations before comparing. */
  readonly defaults?: Readonly<Record<string, JsonScalar>>;
  /** An empty string here is a real value (label values, ConfigMap data), not an omitted field. */
  readonly keepEmpty?: boolean;
  /** An empty map here is a value, not an omission (`namespaceSelector: {}` selects every namespace). */
  readonly presence?: boolean;
  /**
   * A non-pointer Go bool or number: the API server omits its zero (`hostNetwork: false`), so a declared
   * `false`/`0` is satisfied by its absence. Pointer fields (`allowPrivilegeEscalation`) keep an explicit zero.
   */
  readonly omitsZero?: boolean;
  /** An int-or-string (`targetPort`): `8080` and `"8080"` are the same value once decoded. */
  readonly intOrString?: boolean;
  /** `x-kubernetes-map-type: atomic` (custom resources): the map is compared and replaced whole. */
  readonly atomicMap?: boolean;
  /**
   * The API server drops fields of this object that `fields` does not name (a custom resource's
   * structural schema without `x-kubernetes-preserve-unknown-fields`): such a declared field is never live.
   */
  readonly prunesUnknown?: boolean;
  /** A resource quantity: compared by value. */
  readonly quantity?: boolean;
  /** Base64 bytes (`[]byte` in Go): compared after canonical re-encoding. */
  readonly base64?: boolean;
  /** Strategic merge `retainKeys`: a one-of map where keys not sent are cleared. */
  readonly retainKeys?: boolean;
  /** A one-of struct (a probe's handler, a volume's source): declaring one member removes any other. */
  readonly oneOf?: boolean;
  /**
   * A member of a one-of: no longer declared, it is removed whole, not key by key, since what defaulting
   * filled in (`httpGet.scheme`) would stay and the API server refuses two members.
   */
  readonly oneOfMember?: boolean;
  /** For items of atomic lists: paths the API server fills in, ignored when not declared. */
  readonly serverFilled?: readonly (readonly string[])[];
  /** For atomic lists: items admission appends to what was declared (ignored when not declared). */
  readonly admissionItems?: readonly JsonObject[];
}

export type ServerFilledTree = { readonly [key: string]: ServerFilledTree | true };

const treeCache = new WeakMap<FieldSchema, ServerFilledTree>();

/** `serverFilled` paths as a tree, so nested comparison can walk it alongside the values. */
export function serverFilledTree(schema: FieldSchema | undefined): ServerFilledTree | undefined {
  if (!schema?.serverFilled) return undefined;
  let tree = treeCache.get(schema);
  if (!tree) {
    const root: Record<string, ServerFilledTree | true> = {};
    for (const path of schema.serverFilled) {
      let node: Record<string, ServerFilledTree | true> = root;
      path.forEach((segment, i) => {
        if (i === path.length - 1) node[segment] = true;
        else {
          const next = node[segment];
          const child: Record<string, ServerFilledTree | true> = next && next !== true ? { ...next } : {};
          node[segment] = child;
          node = child;
        }
      });
    }
    tree = root;
    treeCache.set(schema, tree);
  }
  return tree;
}

/** The schema of a field the map's schema names (own entries only: a field may be called `constructor`). */
export function namedField(schema: FieldSchema | undefined, key: string): FieldSchema | undefined {
  const fields = schema?.fields;
  return fields === undefined ? undefined : ownEntry<FieldSchema>(fields, key);
}

export function childSchema(schema: FieldSchema | undefined, key: string): FieldSchema | undefined {
  if (!schema) return undefined;
  return namedField(schema, key) ?? schema.values;
}

/** A server-filled subtree by key (own entries only). */
export function filledAt(tree: ServerFilledTree | undefined, key: string): ServerFilledTree | true | undefined {
  return tree === undefined ? undefined : ownEntry<ServerFilledTree | true>(tree, key);
}

/** A merge key's value in an item, else its server default (own properties only, as everywhere). */
function keyValue(item: object, name: string, defaults: Readonly<Record<string, JsonScalar>> | undefined): unknown {
  return own(item, name) ?? (defaults === undefined ? undefined : own(defaults, name));
}

/**
 * The identity of a keyed-list item: its merge key values, with server defaults for missing parts
 * (a port without `protocol` is the TCP port). Undefined when the primary key is missing.
 */
export function itemKey(item: unknown, schema: FieldSchema): string | undefined {
  if (typeof item !== "object" || item === null || Array.isArray(item)) return undefined;
  const keys = schema.keys ?? [];
  const defaults = schema.items?.defaults;
  let out = "";
  for (let i = 0; i < keys.length; i++) {
    const name = keys[i] ?? "";
    const value = keyValue(item, name, defaults);
    if (i === 0 && (value === undefined || value === null)) return undefined;
    out += `${i === 0 ? "" : "\u0000"}${typeof value}:${String(value)}`;
  }
  return out;
}

/**
 * Two items share a merge key. The API server lets some such lists through (a container's env names A, B, A,
 * with only a warning), where merging by key is ambiguous: the first A would be matched against both, and
 * each write flipped its value. Such a list compares and is written whole.
 */
export function hasDuplicateKeys(items: readonly unknown[], schema: FieldSchema): boolean {
  const seen = new Set<string>();
  for (const item of items) {
    const key = itemKey(item, schema);
    if (key === undefined) continue;
    if (seen.has(key)) return true;
    seen.add(key);
  }
  return false;
}

/** The merge key fields of a keyed-list item, as they appear in paths and patches. */
export function itemKeyFields(item: JsonObject, schema: FieldSchema): Record<string, JsonScalar> {
  const out: Record<string, JsonScalar> = {};
  const defaults = schema.items?.defaults;
  for (const name of schema.keys ?? []) {
    const value = keyValue(item, name, defaults);
    if (value !== undefined && value !== null && typeof value !== "object") setOwn(out, name, value as JsonScalar);
  }
  return out;
}

export function hasPrimaryKey(item: unknown, schema: FieldSchema): boolean {
  const primary = schema.keys?.[0];
  if (primary === undefined || typeof item !== "object" || item === null || Array.isArray(item)) return false;
  const value = keyValue(item, primary, schema.items?.defaults);
  return value !== undefined && value !== null;
}

/** Do two items have the same merge key (missing parts taking the server default)? */
export function sameKey(a: unknown, b: unknown, schema: FieldSchema): boolean {
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null) return false;
  const defaults = schema.items?.defaults;
  for (const name of schema.keys ?? []) {
    const va = keyValue(a, name, defaults);
    const vb = keyValue(b, name, defaults);
    if (va !== vb || va === undefined || va === null) {
      if (!((va === undefined || va === null) && (vb === undefined || vb === null) && name !== schema.keys?.[0]))
        return false;
    }
  }
  return true;
}
