/**
 * The JSON types a typed decode expects, as Go's encoding/json reads into a struct: unknown fields are
 * ignored and null reads as the zero value, but a known field holding the wrong JSON type (a string
 * where a bool goes, a list where a mapping goes, a fraction where an integer goes) fails the decode.
 * `shapeProblem` finds the first such field; the CRD (crd-shape.ts), Repo and HierarchyConfig describe theirs.
 */
import { describeJsonType, isJsonObject } from "./json.ts";
import type { JsonValue } from "./json.ts";

/** One field's type: a scalar, a mapping with known fields, a list or map of one type, or a combination. */
export type Shape =
  | "string"
  | "bool"
  | "int"
  | "number"
  | "any"
  | { readonly fields: Readonly<Record<string, Shape>> }
  | { readonly list: Shape }
  | { readonly map: Shape }
  /** A shape defined in terms of itself (a schema's properties are schemas): read when checked. */
  | { readonly lazy: () => Shape }
  /** A boolean or a mapping of the `boolOr` shape; anything else is refused as `expected`. */
  | { readonly boolOr: Shape; readonly expected: string }
  /** A list of the `oneOrList` shape or a single one; anything else reads as unset. */
  | { readonly oneOrList: Shape };

/** The first field under `path` whose JSON type the typed decode would refuse, as `spec.x must be a list, found a string`. */
export function shapeProblem(path: string, shape: Shape, value: JsonValue | undefined): string | undefined {
  if (value === undefined || value === null || shape === "any") return undefined;
  if (typeof shape === "string") return scalarProblem(path, shape, value);
  if ("lazy" in shape) return shapeProblem(path, shape.lazy(), value);
  if ("boolOr" in shape || "oneOrList" in shape) return alternativeProblem(path, shape, value);
  if ("list" in shape) {
    if (!Array.isArray(value)) return wrong(path, "a list", value);
    return firstProblem(
      (value as readonly JsonValue[]).map((item, i) => () => shapeProblem(`${path}[${i}]`, shape.list, item)),
    );
  }
  if (!isJsonObject(value)) return wrong(path, "a mapping", value);
  if ("map" in shape) {
    return firstProblem(
      Object.entries(value).map(
        ([key, item]) =>
          () =>
            shapeProblem(`${path}.${key}`, shape.map, item),
      ),
    );
  }
  return firstProblem(
    Object.entries(shape.fields).map(
      ([key, fieldShape]) =>
        () =>
          shapeProblem(`${path}.${key}`, fieldShape, value[key]),
    ),
  );
}

/** A value that may take one of two JSON types: a boolean or a mapping, or a list or a mapping. */
function alternativeProblem(
  path: string,
  shape: Extract<Shape, { boolOr: Shape } | { oneOrList: Shape }>,
  value: JsonValue,
): string | undefined {
  if ("boolOr" in shape) {
    if (typeof value === "boolean") return undefined;
    return isJsonObject(value) ? shapeProblem(path, shape.boolOr, value) : wrong(path, shape.expected, value);
  }
  if (Array.isArray(value)) return shapeProblem(path, { list: shape.oneOrList }, value);
  return isJsonObject(value) ? shapeProblem(path, shape.oneOrList, value) : undefined;
}

function scalarProblem(path: string, shape: Exclude<Shape, object>, value: JsonValue): string | undefined {
  switch (shape) {
    case "string":
      return typeof value === "string" ? undefined : wrong(path, "a string", value);
    case "bool":
      return typeof value === "boolean" ? undefined : wrong(path, "a boolean", value);
    case "number":
      return typeof value === "number" ? undefined : wrong(path, "a number", value);
    case "int":
      return typeof value === "number" && Number.isInteger(value) ? undefined : wrong(path, "an integer", value);
    case "any":
      return undefined;
  }
}

function firstProblem(checks: readonly (() => string | undefined)[]): string | undefined {
  for (const check of checks) {
    const problem = check();
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function wrong(path: string, expected: string, value: JsonValue): string {
  return `${path} must be ${expected}, found ${describeJsonType(value)}`;
}
