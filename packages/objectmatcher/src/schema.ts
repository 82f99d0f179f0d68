/**
 * The small slice of a schema the matcher needs: which lists merge by key (and by which key), which
 * maps hold free-form strings or quantities, what absence means, and which values the API server fills
 * in inside lists that otherwise compare whole. Built-in kinds get theirs from Kubernetes' Go types
 * (`facts.ts`), custom resources from their CRD's OpenAPI schema (`openapi.ts`). Anything not described
 * is a plain map or an atomic list, which is what strategic merge patch does with untagged fields.
 */
import type { JsonObject, JsonScalar } from "./json.ts";

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

export function childSchema(schema: FieldSchema | undefined, key: string): FieldSchema | undefined {
  if (!schema) return undefined;
  return schema.fields?.[key] ?? schema.values;
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
    const value = (item as Record<string, unknown>)[name] ?? defaults?.[name];
    if (i === 0 && (value === undefined || value === null)) return undefined;
    out += `${i === 0 ? "" : "\u0000"}${typeof value}:${String(value)}`;
  }
  return out;
}

/** The merge key fields of a keyed-list item, as they appear in paths and patches. */
export function itemKeyFields(item: JsonObject, schema: FieldSchema): Record<string, JsonScalar> {
  const out: Record<string, JsonScalar> = {};
  const defaults = schema.items?.defaults;
  for (const name of schema.keys ?? []) {
    const value = item[name] ?? defaults?.[name];
    if (value !== undefined && value !== null && typeof value !== "object") out[name] = value;
  }
  return out;
}

export function hasPrimaryKey(item: unknown, schema: FieldSchema): boolean {
  const primary = schema.keys?.[0];
  if (primary === undefined || typeof item !== "object" || item === null || Array.isArray(item)) return false;
  const value = (item as Record<string, unknown>)[primary] ?? schema.items?.defaults?.[primary];
  return value !== undefined && value !== null;
}

/** Do two items have the same merge key (missing parts taking the server default)? */
export function sameKey(a: unknown, b: unknown, schema: FieldSchema): boolean {
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null) return false;
  const defaults = schema.items?.defaults;
  for (const name of schema.keys ?? []) {
    const va = (a as Record<string, unknown>)[name] ?? defaults?.[name];
    const vb = (b as Record<string, unknown>)[name] ?? defaults?.[name];
    if (va !== vb || va === undefined || va === null) {
      if (!((va === undefined || va === null) && (vb === undefined || vb === null) && name !== schema.keys?.[0]))
        return false;
    }
  }
  return true;
}
