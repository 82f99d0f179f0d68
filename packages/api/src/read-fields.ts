/**
 * Small readers for JSON of unknown shape. Each returns the typed value or undefined, and records
 * why in `problems` using the field's path, so one pass reports every mistake at once instead of
 * making the user fix them one apply at a time.
 */

export type JsonRecord = Readonly<Record<string, unknown>>;

export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `spec` + `git` → `spec.git`; a top-level field has path "". */
function join(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}

export class FieldReader {
  readonly problems: string[] = [];

  problem(message: string): void {
    this.problems.push(message);
  }

  /** A string field; absent, null and "" all read as undefined. */
  string(obj: JsonRecord, key: string, path: string): string | undefined {
    const value = obj[key];
    if (value === undefined || value === null || value === "") return undefined;
    if (typeof value !== "string") {
      this.problem(`${join(path, key)} must be a string`);
      return undefined;
    }
    return value;
  }

  /** A string field that must be present and non-empty. */
  requiredString(obj: JsonRecord, key: string, path: string, why = "is required"): string | undefined {
    const raw = obj[key];
    if (raw === undefined || raw === null || raw === "") {
      this.problem(`${join(path, key)} ${why}`);
      return undefined;
    }
    return this.string(obj, key, path);
  }

  /** A string field restricted to `allowed`; "" and absent read as undefined. */
  oneOf<T extends string>(obj: JsonRecord, key: string, path: string, allowed: readonly T[]): T | undefined {
    const value = this.string(obj, key, path);
    if (value === undefined) return undefined;
    if (!(allowed as readonly string[]).includes(value)) {
      this.problem(`${join(path, key)} must be one of ${allowed.join(", ")} (got "${value}")`);
      return undefined;
    }
    return value as T;
  }

  boolean(obj: JsonRecord, key: string, path: string): boolean | undefined {
    const value = obj[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "boolean") {
      this.problem(`${join(path, key)} must be true or false`);
      return undefined;
    }
    return value;
  }

  /** An integer within [min, max]. */
  integer(obj: JsonRecord, key: string, path: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
    const value = obj[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
      this.problem(`${join(path, key)} must be an integer from ${min} to ${max}`);
      return undefined;
    }
    return value;
  }

  /** A nested object; absent or null read as undefined. */
  record(obj: JsonRecord, key: string, path: string): JsonRecord | undefined {
    const value = obj[key];
    if (value === undefined || value === null) return undefined;
    if (!isRecord(value)) {
      this.problem(`${join(path, key)} must be an object`);
      return undefined;
    }
    return value;
  }

  /** An array of objects; non-object items are reported and skipped. */
  records(obj: JsonRecord, key: string, path: string): JsonRecord[] | undefined {
    const value = obj[key];
    if (value === undefined || value === null) return undefined;
    if (!Array.isArray(value)) {
      this.problem(`${join(path, key)} must be a list`);
      return undefined;
    }
    const out: JsonRecord[] = [];
    value.forEach((item: unknown, index) => {
      if (isRecord(item)) out.push(item);
      else this.problem(`${join(path, key)}[${index}] must be an object`);
    });
    return out;
  }

  /** A map of string to string (labels, annotations). */
  stringMap(obj: JsonRecord, key: string, path: string): Readonly<Record<string, string>> | undefined {
    const value = this.record(obj, key, path);
    if (value === undefined) return undefined;
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(value)) {
      if (typeof v === "string") out[k] = v;
      else this.problem(`${join(path, key)}["${k}"] must be a string`);
    }
    return out;
  }

  /** A list of strings. */
  strings(obj: JsonRecord, key: string, path: string): string[] | undefined {
    const value = obj[key];
    if (value === undefined || value === null) return undefined;
    if (!Array.isArray(value) || !value.every((v): v is string => typeof v === "string")) {
      this.problem(`${join(path, key)} must be a list of strings`);
      return undefined;
    }
    return value;
  }
}
