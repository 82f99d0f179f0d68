/**
 * A typed subset of OpenAPI v3 as CustomResourceDefinitions use it, and terse builders, so the
 * CRD schemas read like the API they describe. Every builder emits a structural node (a `type`,
 * or one of the x-kubernetes escape hatches), which apiextensions.k8s.io/v1 requires.
 */

export interface JsonSchemaProps {
  readonly type?: "object" | "array" | "string" | "integer" | "number" | "boolean";
  readonly description?: string;
  readonly format?: string;
  readonly properties?: Readonly<Record<string, JsonSchemaProps>>;
  readonly items?: JsonSchemaProps;
  readonly required?: readonly string[];
  readonly enum?: readonly (string | number)[];
  readonly pattern?: string;
  readonly maxLength?: number;
  readonly default?: unknown;
  readonly nullable?: boolean;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly anyOf?: readonly JsonSchemaProps[];
  readonly "x-kubernetes-preserve-unknown-fields"?: boolean;
  readonly "x-kubernetes-int-or-string"?: boolean;
  readonly "x-kubernetes-list-type"?: "atomic" | "set" | "map";
  readonly "x-kubernetes-list-map-keys"?: readonly string[];
}

type Extra = Omit<JsonSchemaProps, "type" | "description">;

export function str(description: string, extra: Extra = {}): JsonSchemaProps {
  return { description, type: "string", ...extra };
}

export function int64(description: string, extra: Extra = {}): JsonSchemaProps {
  return { description, type: "integer", format: "int64", ...extra };
}

export function int(description: string, extra: Extra = {}): JsonSchemaProps {
  return { description, type: "integer", ...extra };
}

export function bool(description: string): JsonSchemaProps {
  return { description, type: "boolean" };
}

/** An RFC 3339 timestamp (metav1.Time). Nullable because Go writes a zero time as null. */
export function time(description: string): JsonSchemaProps {
  return { description, type: "string", format: "date-time", nullable: true };
}

export function obj(
  description: string,
  properties: Readonly<Record<string, JsonSchemaProps>>,
  extra: Extra = {},
): JsonSchemaProps {
  return { description, type: "object", properties, ...extra };
}

export function arr(description: string, items: JsonSchemaProps, extra: Extra = {}): JsonSchemaProps {
  return { description, type: "array", items, ...extra };
}

/** Arbitrary JSON (any type), kept as written: e.g. Helm values. */
export function anyJson(description: string): JsonSchemaProps {
  return { description, "x-kubernetes-preserve-unknown-fields": true };
}

const quantityPattern =
  "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$";

/** A resource.Quantity: `500m`, `1Gi`, or a bare number. */
export function quantity(description: string): JsonSchemaProps {
  return {
    description,
    anyOf: [{ type: "integer" }, { type: "string" }],
    pattern: quantityPattern,
    "x-kubernetes-int-or-string": true,
  };
}
