/**
 * Checks CRD schemas without an API server: whether a schema is structural (what
 * apiextensions.k8s.io/v1 demands), and whether a manifest would pass it the way
 * `kubectl apply` (strict field validation) would — unknown fields are errors unless a
 * node keeps them. Used by tests to prove Config Sync manifests are accepted unchanged.
 */
import type { JsonSchemaProps } from "./crd-schema.ts";

/** Every node must say what it holds; arrays need items. Returns the offending paths. */
export function structuralProblems(schema: JsonSchemaProps, path = "<root>"): string[] {
  const problems: string[] = [];
  const escape =
    schema["x-kubernetes-preserve-unknown-fields"] === true || schema["x-kubernetes-int-or-string"] === true;
  if (schema.type === undefined && !escape) problems.push(`${path}: no type`);
  if (schema.type === "array" && schema.items === undefined) problems.push(`${path}: array without items`);
  if (schema["x-kubernetes-int-or-string"] === true && schema.type !== undefined) {
    problems.push(`${path}: int-or-string must not have a type`);
  }
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    problems.push(...structuralProblems(child, `${path}.${key}`));
  }
  if (schema.items !== undefined) problems.push(...structuralProblems(schema.items, `${path}[]`));
  for (const key of schema.required ?? []) {
    if (schema.properties?.[key] === undefined) problems.push(`${path}: required "${key}" is not a property`);
  }
  return problems;
}

/** Why `value` would be rejected by `schema`, or [] when it would be accepted. */
export function schemaViolations(value: unknown, schema: JsonSchemaProps, path = ""): string[] {
  if (value === null) return schema.nullable === true ? [] : [`${path}: must not be null`];
  if (schema["x-kubernetes-int-or-string"] === true) {
    if (typeof value === "number") return Number.isInteger(value) ? [] : [`${path}: must be an integer or a string`];
    if (typeof value !== "string") return [`${path}: must be an integer or a string`];
    return matchesPattern(value, schema, path);
  }
  if (schema.type === undefined) return [];
  const typeProblem = checkType(value, schema.type, path);
  if (typeProblem !== undefined) return [typeProblem];

  const problems: string[] = [];
  if (schema.enum !== undefined && !schema.enum.includes(value as string | number)) {
    problems.push(`${path}: ${JSON.stringify(value)} is not one of ${schema.enum.join(", ")}`);
  }
  if (typeof value === "string") problems.push(...matchesPattern(value, schema, path));
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) problems.push(`${path}: below ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) problems.push(`${path}: above ${schema.maximum}`);
  }
  if (Array.isArray(value) && schema.items !== undefined) {
    const items = schema.items;
    value.forEach((item: unknown, i) => problems.push(...schemaViolations(item, items, `${path}[${i}]`)));
  }
  if (schema.type === "object" && typeof value === "object" && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    for (const key of schema.required ?? []) {
      if (!(key in record)) problems.push(`${path}.${key}: required`);
    }
    const keepsUnknown = schema["x-kubernetes-preserve-unknown-fields"] === true || schema.properties === undefined;
    for (const [key, child] of Object.entries(record)) {
      const childSchema = schema.properties?.[key];
      if (childSchema !== undefined) problems.push(...schemaViolations(child, childSchema, `${path}.${key}`));
      else if (!keepsUnknown) problems.push(`${path}.${key}: unknown field`);
    }
  }
  return problems;
}

function checkType(value: unknown, type: NonNullable<JsonSchemaProps["type"]>, path: string): string | undefined {
  const ok =
    type === "object"
      ? typeof value === "object" && !Array.isArray(value)
      : type === "array"
        ? Array.isArray(value)
        : type === "integer"
          ? typeof value === "number" && Number.isInteger(value)
          : typeof value === type;
  return ok ? undefined : `${path}: must be ${type}`;
}

function matchesPattern(value: string, schema: JsonSchemaProps, path: string): string[] {
  if (schema.maxLength !== undefined && value.length > schema.maxLength)
    return [`${path}: longer than ${schema.maxLength} characters`];
  if (schema.pattern === undefined || new RegExp(schema.pattern).test(value)) return [];
  return [`${path}: "${value}" does not match ${schema.pattern}`];
}
