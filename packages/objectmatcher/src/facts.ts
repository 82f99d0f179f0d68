/**
 * Field schemas of the built-in kinds, built from what the generator read off Kubernetes' own Go types
 * and OpenAPI definitions (`kube-facts.generated.ts`), plus the few facts the types cannot state
 * (`server-filled.ts`). Built lazily, one struct at a time, and shared by every kind that uses it.
 *
 * How a Go fact becomes matcher behaviour:
 * - a non-pointer bool or number: Go's encoder writes its zero as "nothing" (omitempty) or the zero
 *   itself, so a declared `false`/`0` is satisfied by its absence (`omitsZero`). A pointer keeps an
 *   explicit `false`/`0`, and its absence means something else (`allowPrivilegeEscalation` unset is
 *   true for most containers), so there a declared zero must be written;
 * - a pointer string keeps `""` (`storageClassName: ""` disables dynamic provisioning): `keepEmpty`;
 * - an empty struct is "nothing declared inside" (`securityContext: {}`), except where `{}` is itself the
 *   choice: a pointer `LabelSelector` (`{}` selects everything, none selects nothing) and a member of a
 *   one-of (`emptyDir: {}`): `presence`; a one-of member no longer declared goes whole (`oneOfMember`);
 * - lists follow the strategic-merge tags, because strategic merge is how the update is computed:
 *   `patchStrategy: merge` with a `patchMergeKey` is a keyed list whose identity is the
 *   `listMapKeys` (the merge key first: ports are `containerPort` + `protocol`), without a merge key
 *   a set; anything else (including `listType: map` without a patch strategy, mostly status
 *   conditions) compares whole, as strategic merge replaces it whole;
 * - maps always merge key by key, whatever their `mapType`: strategic merge does, and an atomic
 *   `nodeSelector` that admission added to (PodNodeSelector) must not be fought over;
 * - `resource.Quantity` compares by value, `IntOrString` compares `80` with `"80"`, `[]byte` is base64.
 */
import { KINDS, STRUCTS } from "./kube-facts.generated.ts";
import type { FieldSchema } from "./schema.ts";
import { packageAndType, structOverlay } from "./server-filled.ts";

/** One JSON field of a Go struct, as the generator reports it. */
export interface GoField {
  /** `bool`, `int`, `float`, `string`, `time`, `quantity`, `int-or-string`, `bytes`, `any`, `[]T`, `map[]T` or a struct name. */
  readonly type: string;
  readonly pointer?: boolean;
  readonly omitempty?: boolean;
  readonly patchStrategy?: string;
  readonly patchMergeKey?: string;
  readonly listType?: string;
  readonly listMapKeys?: readonly string[];
  readonly mapType?: string;
}

export interface GoStruct {
  /** `+structType=atomic`. */
  readonly atomic?: boolean;
  readonly fields: Readonly<Record<string, GoField>>;
}

const OMITS_ZERO: FieldSchema = { omitsZero: true };
const KEEP_EMPTY: FieldSchema = { keepEmpty: true };
const QUANTITY: FieldSchema = { quantity: true };
const INT_OR_STRING: FieldSchema = { intOrString: true };
const BYTES: FieldSchema = { base64: true };
const BYTES_VALUE: FieldSchema = { base64: true, keepEmpty: true };

const structs = new Map<string, FieldSchema>();

/** The schema of a Go struct by its generated name (`core/v1.Container`). */
export function structSchema(name: string): FieldSchema {
  const known = structs.get(name);
  if (known) return known;
  const fields: Record<string, FieldSchema> = {};
  // Registered before its fields are built, so recursive types (JSONSchemaProps) refer to themselves.
  const oneOf = ONE_OF_STRUCTS.has(packageAndType(name));
  const schema: FieldSchema = { fields, ...structOverlay(name), ...(oneOf ? { oneOf: true } : {}) };
  structs.set(name, schema);
  for (const [key, field] of Object.entries(goStruct(name)?.fields ?? {})) {
    const child = fieldSchema(field, oneOf);
    if (child) fields[key] = child;
  }
  return schema;
}

/** The generated facts of a Go struct, parsed from their JSON text (structSchema asks once per struct). */
export function goStruct(name: string): GoStruct | undefined {
  const text = STRUCTS[name];
  return text === undefined ? undefined : (JSON.parse(text) as GoStruct);
}

/** The Go struct of a built-in `apiVersion Kind`, if the generated facts have it. */
export function kindStruct(apiVersion: string, kind: string): string | undefined {
  return KINDS[`${apiVersion} ${kind}`];
}

/** Every generated `apiVersion Kind`. */
export function generatedKinds(): readonly string[] {
  return Object.keys(KINDS);
}

/**
 * One-of structs (`+union`, `+oneOf`, "one and only one of", or a validation refusing a second member),
 * by package and type; an inline struct by the one embedding it (a PersistentVolume's source is
 * immutable: not listed). Their pointer-struct members are the choice even when `{}` (`emptyDir: {}`),
 * and one no longer declared goes whole: defaulting fills members (`httpGet.scheme`, `service.port`),
 * and what a key-by-key removal leaves is a second choice the API server refuses.
 */
export const ONE_OF_STRUCTS: ReadonlySet<string> = new Set([
  "core.Volume", // VolumeSource inline: "may not specify more than 1 volume type"
  "core.VolumeProjection",
  "core.Probe", // ProbeHandler inline: "may not specify more than 1 handler type"
  "core.LifecycleHandler",
  "core.EnvVarSource", // "may not have more than one field specified at a time"
  "core.EnvFromSource",
  "admissionregistration.WebhookClientConfig", // "exactly one of `url` or `service`"
  "apiextensions.WebhookClientConfig",
  "flowcontrol.Subject", // +union
  "flowcontrol.PriorityLevelConfigurationSpec",
  "flowcontrol.LimitResponse",
  "resource.ResourceSliceSpec", // +oneOf=NodeSelection
  "resource.Device", // +oneOf=DeviceNodeSelection
  "resource.BasicDevice",
  "resource.CapacityRequestPolicy",
  "resource.DeviceRequest",
  "resource.DeviceSelector",
  "resource.DeviceClaimConfiguration", // DeviceConfiguration inline
  "resource.DeviceClassConfiguration",
]);
const LABEL_SELECTOR = "meta/v1.LabelSelector";

function fieldSchema(field: GoField, oneOf: boolean): FieldSchema | undefined {
  const strategies = field.patchStrategy?.split(",") ?? [];
  const retainKeys = strategies.includes("retainKeys");
  if (field.type.startsWith("[]") && field.type !== "[]") {
    const item = typeSchema(field.type.slice(2), false);
    const items = retainKeys && item ? { ...item, retainKeys: true } : item;
    if (!strategies.includes("merge")) return items ? { items } : undefined;
    const key = field.patchMergeKey;
    if (key === undefined || key === "") return { list: "set", ...(items ? { items } : {}) };
    const listKeys = field.listMapKeys?.includes(key) ? field.listMapKeys : [key];
    const keys = [key, ...listKeys.filter((k) => k !== key)];
    return { list: "map", keys, ...(items ? { items } : {}) };
  }
  const schema = typeSchema(field.type, field.pointer === true);
  const member = oneOf && field.pointer === true && STRUCTS[field.type] !== undefined;
  const presence = member || (field.pointer === true && field.type === LABEL_SELECTOR);
  if (!schema || (!retainKeys && !presence)) return schema;
  return {
    ...schema,
    ...(retainKeys ? { retainKeys: true } : {}),
    ...(presence ? { presence: true } : {}),
    ...(member ? { oneOfMember: true } : {}),
  };
}

function typeSchema(type: string, pointer: boolean): FieldSchema | undefined {
  switch (type) {
    case "bool":
    case "int":
    case "float":
      return pointer ? undefined : OMITS_ZERO;
    case "string":
      return pointer ? KEEP_EMPTY : undefined;
    case "quantity":
      return QUANTITY;
    case "int-or-string":
      return INT_OR_STRING;
    case "bytes":
      return BYTES;
    case "time":
    case "any":
      return undefined;
  }
  if (type.startsWith("[]")) {
    const items = typeSchema(type.slice(2), false);
    return items ? { items } : undefined;
  }
  if (type.startsWith("map[]")) {
    const value = type.slice(5);
    // A map's values are never "omitted": an empty label value or an empty file is a value.
    const values = value === "string" ? KEEP_EMPTY : value === "bytes" ? BYTES_VALUE : typeSchema(value, false);
    return { values: values ?? {} };
  }
  return structSchema(type);
}
