/**
 * A content hash per declared object (DeclaredObject.sourceHash). It depends only on the object's
 * content, not on key order or formatting in the file, so reformatting YAML does not look like a
 * change. Not to be confused with @driftless/api's `sourceHash(commit)`, the commit prefix Config Sync
 * writes into ResourceGroup status.
 */
import { hash } from "node:crypto";
import { isJsonArray } from "./json.ts";
import type { JsonObject, JsonValue } from "./json.ts";

/** Hex characters kept: 64 bits, ample to tell versions of one object apart. */
const contentHashLength = 16;

export function contentHash(value: JsonValue): string {
  // One-shot hash(): no Hash object per call, whose native state would wait for the garbage collector.
  return hash("sha256", canonicalJson(value), "hex").slice(0, contentHashLength);
}

/** JSON with object keys sorted at every level and no whitespace. */
export function canonicalJson(value: JsonValue): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (isJsonArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const object: JsonObject = value;
  const keys = Object.keys(object).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(object[key] ?? null)}`).join(",")}}`;
}
