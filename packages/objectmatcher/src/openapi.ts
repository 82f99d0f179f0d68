/**
 * Custom resources' field schemas from the API server's OpenAPI v3 documents
 * (`/openapi/v3/apis/<group>/<version>`): the merge semantics the server itself applies.
 *
 * - `x-kubernetes-list-type: map` with `x-kubernetes-list-map-keys`: a keyed list (items others add
 *   stay theirs); `set`: a set; `atomic` or nothing: compared and replaced whole.
 * - `x-kubernetes-map-type: atomic`: a map compared and replaced whole (keys others add are removed);
 *   granular (the default) merges key by key.
 * - `x-kubernetes-int-or-string`: stored as sent, so `80` and `"80"` stay different (no re-spelling).
 * - `default`: the server fills it in where the field is absent (structural defaulting), so a live
 *   value equal to it is the server's where we declared nothing, and a keyed list's key default is part
 *   of each item's identity (`protocol: TCP`).
 * - An object with `properties` and without `x-kubernetes-preserve-unknown-fields` (or
 *   `additionalProperties`, or `x-kubernetes-embedded-resource`) has its unknown fields pruned by the
 *   server: a declared field it does not know can never be live, so it is not a change.
 *
 * A schema the matcher cannot read leaves the custom resource as it was without one: lists atomic.
 */
import { isObject, setOwn } from "./json.ts";
import type { JsonObject, JsonScalar } from "./json.ts";
import type { CustomResourceSchemas } from "./kinds.ts";
import { objectMetaSchema } from "./kinds.ts";
import { namedField } from "./schema.ts";
import type { FieldSchema } from "./schema.ts";

const OBJECT_META_REF = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const REF_PREFIX = "#/components/schemas/";

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** The kinds an OpenAPI v3 document describes, each with its schema (`apiVersion Kind` → schema). */
export function schemasFromOpenApi(document: unknown): Map<string, FieldSchema> {
  const out = new Map<string, FieldSchema>();
  const components = isObject(document) && isObject(document["components"]) ? document["components"] : {};
  const schemas = isObject(components["schemas"]) ? components["schemas"] : {};
  const converter = new Converter(schemas);
  for (const [name, node] of Object.entries(schemas)) {
    if (!isObject(node)) continue;
    const gvks = node["x-kubernetes-group-version-kind"];
    if (!Array.isArray(gvks)) continue;
    for (const gvk of gvks) {
      if (!isObject(gvk) || typeof gvk["kind"] !== "string" || typeof gvk["version"] !== "string") continue;
      if (gvk["kind"].endsWith("List")) continue;
      const group = typeof gvk["group"] === "string" ? gvk["group"] : "";
      const apiVersion = group === "" ? gvk["version"] : `${group}/${gvk["version"]}`;
      const root = converter.named(name);
      // Every object's metadata is ObjectMeta, whatever the document says about it.
      const fields = { ...root.fields, metadata: objectMetaSchema() };
      out.set(`${apiVersion} ${gvk["kind"]}`, { ...root, fields });
    }
  }
  return out;
}

/**
 * The kinds a CustomResourceDefinition object describes (`apiVersion Kind` → schema), one per served
 * version with a schema, read from `spec.versions[].schema.openAPIV3Schema`: the schema the server
 * publishes under `/openapi/v3` is built from exactly this, a moment later. Root `apiVersion`, `kind`
 * and `metadata` are added, as the server adds them to what it publishes.
 */
export function schemasFromCrd(crd: unknown): Map<string, FieldSchema> {
  const out = new Map<string, FieldSchema>();
  const spec = isObject(crd) && isObject(crd["spec"]) ? crd["spec"] : undefined;
  const names = spec !== undefined && isObject(spec["names"]) ? spec["names"] : undefined;
  const group = spec?.["group"];
  const kind = names?.["kind"];
  const versions = spec?.["versions"];
  if (typeof group !== "string" || typeof kind !== "string" || !Array.isArray(versions)) return out;
  for (const version of versions) {
    if (!isObject(version) || typeof version["name"] !== "string" || version["served"] === false) continue;
    const schema = isObject(version["schema"]) ? version["schema"]["openAPIV3Schema"] : undefined;
    if (!isObject(schema)) continue;
    const root = new Converter({}).convert(schema) ?? {};
    const fields = { ...root.fields, apiVersion: {}, kind: {}, metadata: objectMetaSchema() };
    out.set(`${group}/${version["name"]} ${kind}`, { ...root, fields });
  }
  return out;
}

class Converter {
  readonly #schemas: JsonObject;
  readonly #named = new Map<string, FieldSchema>();

  constructor(schemas: JsonObject) {
    this.#schemas = schemas;
  }

  named(name: string): FieldSchema {
    const known = this.#named.get(name);
    if (known) return known;
    if (name === OBJECT_META_REF) return objectMetaSchema();
    // Registered before it is filled in, so a recursive schema refers to itself.
    const schema: Mutable<FieldSchema> = {};
    this.#named.set(name, schema);
    const node = this.#schemas[name];
    Object.assign(schema, (isObject(node) && this.convert(node)) || {});
    return schema;
  }

  convert(node: JsonObject): FieldSchema | undefined {
    const ref = refOf(node);
    if (ref !== undefined) return this.named(ref);
    const out: Mutable<FieldSchema> = {};
    if (node["x-kubernetes-int-or-string"] === true) out.intOrString = true;
    const value = node["default"];
    if (value !== undefined) out.default = value;
    if (node["type"] === "array") {
      const items = isObject(node["items"]) ? this.convert(node["items"]) : undefined;
      if (items) out.items = items;
      const listType = node["x-kubernetes-list-type"];
      const keys = node["x-kubernetes-list-map-keys"];
      if (listType === "set") out.list = "set";
      else if (
        listType === "map" &&
        Array.isArray(keys) &&
        keys.length > 0 &&
        keys.every((k) => typeof k === "string")
      ) {
        out.list = "map";
        out.keys = keys as string[];
        // A key with a default is part of the item's identity as the server fills it in (protocol: TCP).
        const defaults = keyDefaults(items, out.keys);
        if (items && defaults) out.items = { ...items, defaults };
      }
    }
    const properties = node["properties"];
    if (isObject(properties)) {
      const fields: Record<string, FieldSchema> = {};
      for (const [key, child] of Object.entries(properties)) {
        const converted = isObject(child) ? this.convert(child) : undefined;
        setOwn(fields, key, converted ?? {});
      }
      out.fields = fields;
      const open =
        node["x-kubernetes-preserve-unknown-fields"] === true ||
        node["x-kubernetes-embedded-resource"] === true ||
        node["additionalProperties"] !== undefined;
      if (!open) out.prunesUnknown = true;
    }
    const additional = node["additionalProperties"];
    if (isObject(additional)) {
      const values = this.convert(additional);
      if (values) out.values = values;
    }
    if (node["x-kubernetes-map-type"] === "atomic") out.atomicMap = true;
    return Object.keys(out).length > 0 ? out : undefined;
  }
}

/** The scalar schema defaults of a keyed list's item keys, if any has one. */
function keyDefaults(items: FieldSchema | undefined, keys: readonly string[]): Record<string, JsonScalar> | undefined {
  let out: Record<string, JsonScalar> | undefined;
  for (const key of keys) {
    const value = namedField(items, key)?.default;
    if (value === undefined || (value !== null && typeof value === "object")) continue;
    out ??= {};
    setOwn(out, key, value);
  }
  return out;
}

/** `$ref`, or `allOf: [{$ref}]` (how OpenAPI v3 documents attach a description to a reference). */
function refOf(node: JsonObject): string | undefined {
  let ref = node["$ref"];
  const allOf = node["allOf"];
  if (ref === undefined && Array.isArray(allOf) && allOf.length === 1 && isObject(allOf[0])) ref = allOf[0]["$ref"];
  return typeof ref === "string" && ref.startsWith(REF_PREFIX) ? ref.slice(REF_PREFIX.length) : undefined;
}

/**
 * Schemas of custom resources for the matcher, by `apiVersion` and kind: filled from OpenAPI v3
 * documents (`setGroupVersion`) or by hand (`set`). `new PatchMaker(annotator, { schemas: registry })`.
 */
export class CustomResourceSchemaRegistry implements CustomResourceSchemas {
  readonly #byKind = new Map<string, FieldSchema>();
  /** Which keys came from one source (a group-version's document, a CRD), so it replaces them whole. */
  readonly #bySource = new Map<string, readonly string[]>();

  schemaFor(apiVersion: string, kind: string): FieldSchema | undefined {
    return this.#byKind.get(`${apiVersion} ${kind}`);
  }

  /** Sets (or, with undefined, forgets) the schema of one kind. */
  set(apiVersion: string, kind: string, schema: FieldSchema | undefined): void {
    if (schema === undefined) this.#byKind.delete(`${apiVersion} ${kind}`);
    else this.#byKind.set(`${apiVersion} ${kind}`, schema);
  }

  /**
   * Replaces every schema of one group-version (`example.com/v1`) with those of its OpenAPI v3
   * document; returns the kinds it found. An unreadable document forgets the group-version.
   */
  setGroupVersion(groupVersion: string, document: unknown): string[] {
    const found = [...schemasFromOpenApi(document)].filter(([key]) => key.startsWith(`${groupVersion} `));
    this.#replace(`openapi ${groupVersion}`, found);
    return found.map(([key]) => key.slice(groupVersion.length + 1));
  }

  /**
   * Replaces every schema read before from the CRD named `name` with those of `crd` (undefined: the
   * CRD is gone, its schemas are forgotten); returns the `apiVersion Kind` keys it set.
   */
  setCustomResourceDefinition(name: string, crd: unknown): string[] {
    const found = crd === undefined ? [] : [...schemasFromCrd(crd)];
    this.#replace(`crd ${name}`, found);
    return found.map(([key]) => key);
  }

  #replace(source: string, found: readonly (readonly [string, FieldSchema])[]): void {
    for (const key of this.#bySource.get(source) ?? []) this.#byKind.delete(key);
    for (const [key, schema] of found) this.#byKind.set(key, schema);
    if (found.length === 0) this.#bySource.delete(source);
    else
      this.#bySource.set(
        source,
        found.map(([key]) => key),
      );
  }
}
