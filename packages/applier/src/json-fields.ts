import type { JsonObject } from "./desired.ts";

/** The value as a JSON object, or undefined when it is none (an array, a scalar, null). */
export function asObject(value: unknown): JsonObject | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined;
}

/** The value at `path`, or undefined where the path leaves the objects. */
export function field(object: JsonObject, ...path: string[]): unknown {
  let value: unknown = object;
  for (const key of path) value = asObject(value)?.[key];
  return value;
}
