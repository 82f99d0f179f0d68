/** Field readers the spec parsers of every source share. */
import { parseDuration } from "./duration.ts";
import type { FieldReader, JsonRecord } from "./read-fields.ts";
import type { SecretReference } from "./sync-types.ts";

export function secretReference(
  raw: JsonRecord,
  key: string,
  path: string,
  reader: FieldReader,
): SecretReference | undefined {
  const ref = reader.record(raw, key, path);
  if (ref === undefined) return undefined;
  const name = reader.string(ref, "name", `${path}.${key}`);
  return name === undefined ? {} : { name };
}

export function durationField(raw: JsonRecord, key: string, path: string, reader: FieldReader): string | undefined {
  const value = reader.string(raw, key, path);
  if (value !== undefined && parseDuration(value) === undefined) {
    reader.problem(`${path}.${key} must be a duration such as "15s" or "1m30s" (got "${value}")`);
    return undefined;
  }
  return value;
}
