/**
 * Plain JSON values: what a manifest is once parsed, and the only shape the rest of driftless sees.
 * YAML can express more (timestamps, binary, sets, NaN); those are rejected at the edge here, because the
 * API server would refuse or silently mangle them.
 */

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | readonly JsonValue[] | JsonObject;
export interface JsonObject {
  readonly [key: string]: JsonValue;
}

export function isJsonObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// Array.isArray narrows to any[]; this keeps the element type.
export function isJsonArray(value: JsonValue | undefined): value is readonly JsonValue[] {
  return Array.isArray(value);
}

/** A short, content-free description of a value's type for error messages (never echo values: secrets). */
export function describeJsonType(value: JsonValue | undefined): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return `a ${typeof value}`;
}

/**
 * Checks that `value` (produced by a YAML parser) is plain JSON and returns it typed, or returns the
 * path of the first value that is not.
 */
export function asJsonValue(
  value: unknown,
  path = "$",
): { readonly value: JsonValue } | { readonly badPath: string; readonly what: string } {
  switch (typeof value) {
    case "string":
    case "boolean":
      return { value };
    case "number":
      return Number.isFinite(value) ? { value } : { badPath: path, what: "a non-finite number (.inf or .nan)" };
    case "object": {
      if (value === null) return { value: null };
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i];
          const checked = asJsonValue(item, `${path}[${i}]`);
          if ("badPath" in checked) return checked;
        }
        return { value: value as readonly JsonValue[] };
      }
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) {
        return { badPath: path, what: `a ${value.constructor.name} (a YAML tag with no JSON equivalent)` };
      }
      for (const [key, item] of Object.entries(value)) {
        const checked = asJsonValue(item, `${path}.${key}`);
        if ("badPath" in checked) return checked;
      }
      return { value: value as JsonObject };
    }
    default:
      return { badPath: path, what: `a ${typeof value}` };
  }
}

/**
 * Whether collections nest more than `maxDepth` deep in `value` (a scalar is 0 deep, `{}` 1). Stops at
 * the limit, so even a file of a million `[` cannot overflow the stack here.
 */
export function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (maxDepth <= 0) return true;
  for (const item of Object.values(value) as unknown[]) if (nestsDeeperThan(item, maxDepth - 1)) return true;
  return false;
}
