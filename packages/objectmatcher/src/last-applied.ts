/**
 * The last-applied record: what we applied last time, kept on the object itself because the API
 * server keeps no history. It is the `original` of the three-way match, and the only way to tell
 * "removed from Git" apart from "never ours".
 *
 * - Our own annotation key, never kubectl's, so `kubectl apply` and driftless never misread each other.
 * - The record is the declaration as given, without the annotation itself and without server-owned
 *   metadata (it is normalised when read, like every input), serialised with sorted keys and, from
 *   {@link COMPRESS_FROM_BYTES} up, brotli-compressed (`br64:` + base64): the same declaration always
 *   gives the same bytes. Smaller records stay canonical JSON (starting with `{`): compressing them
 *   saves a few hundred bytes but costs a zlib handle per write and per read, which at 10,000 objects
 *   was tens of MiB of native memory churn and a measurable share of a pass's CPU.
 * - The API server rejects objects whose annotations (keys + values) exceed 256 KiB in total; a record
 *   that does not fit even compressed raises {@link LastAppliedTooLargeError} instead of a failed write.
 * - Secret values are recorded as SHA-256 digests: the record is only used to know which keys we
 *   declared, and an annotation must not become a second copy of the secret.
 * - So is every other string value over {@link DIGEST_VALUES_FROM_BYTES} (ConfigMap data, annotations, a
 *   CRD's long descriptions), for the same reason: the three-way match reads a recorded value only to
 *   know it was declared, never compares it. Before, a ConfigMap with 900 KiB of base64 or 137 KiB of
 *   its own annotations could not be recorded (KNV2009) where Config Sync syncs it. Values inside lists
 *   stay whole: a keyed list's merge key and a set's member are matched by value. Records written with
 *   full values are read as before. A record that still does not fit digests every value longer than
 *   its digest before it is refused.
 */
import { Buffer } from "node:buffer";
import { hash } from "node:crypto";
import { brotliCompressSync, brotliDecompressSync, constants } from "node:zlib";
import { InvalidObjectError, LastAppliedTooLargeError, LastAppliedUnreadableError } from "./errors.ts";
import type { ObjectRef } from "./errors.ts";
import { canonicalClone, isObject, setOwn } from "./json.ts";
import type { JsonObject, JsonValue } from "./json.ts";
import { resolveKind } from "./kinds.ts";
import { SERVER_METADATA_FIELDS } from "./normalize.ts";

/** Where the last-applied record lives. Ours, not `kubectl.kubernetes.io/last-applied-configuration`. */
export const LAST_APPLIED_ANNOTATION = "driftless.dev/last-applied-configuration";
/** kube-apiserver's `TotalAnnotationSizeLimitB`: all keys and values of an object's annotations together. */
export const ANNOTATIONS_SIZE_LIMIT_BYTES = 256 * 1024;
/** Prefix of a compressed record (brotli, then standard base64). */
export const COMPRESSED_RECORD_PREFIX = "br64:";
/** Records at least this long (canonical JSON, bytes) are compressed; shorter ones are stored as JSON. */
export const COMPRESS_FROM_BYTES = 1024;

/** String values (outside lists) longer than this, in UTF-8 bytes, are recorded as their SHA-256 digest. */
export const DIGEST_VALUES_FROM_BYTES = 256;
/** Prefix of a recorded digest, as Secret values have always been recorded. */
const DIGEST_PREFIX = "sha256:";
/** A digest's length: the last resort digests every value longer than this, where it saves bytes. */
const DIGEST_CHARS = DIGEST_PREFIX.length + 64;
/** Type meta and names identify the object: kept as declared, whatever their length. */
const KEPT_ROOT_FIELDS: ReadonlySet<string> = new Set(["apiVersion", "kind", "metadata"]);
const KEPT_METADATA_FIELDS: ReadonlySet<string> = new Set(["name", "namespace", "generateName"]);

/** Decompression stops here: far above any object etcd accepts, well below harm. */
const MAX_RECORD_BYTES = 16 * 1024 * 1024;
const DECODE_CACHE_ENTRIES = 256;
/** Larger records are decoded every time rather than pinned in memory. */
const DECODE_CACHE_MAX_VALUE_CHARS = 16 * 1024;

export type ReadOriginal =
  | { readonly record: JsonObject; readonly error?: undefined }
  | { readonly record?: undefined; readonly error?: LastAppliedUnreadableError };

export class Annotator {
  readonly annotationKey: string;
  // The reconciler matches every object on every pass against an unchanged annotation; decoding it
  // again each time would cost more than the match itself. Records are never modified after decoding.
  readonly #decoded = new Map<string, JsonObject>();

  constructor(annotationKey: string = LAST_APPLIED_ANNOTATION) {
    if (annotationKey === "") throw new InvalidObjectError("the last-applied annotation key must not be empty");
    this.annotationKey = annotationKey;
  }

  /** Stores `obj`'s last-applied record on `obj.metadata.annotations`, replacing any earlier one. */
  setLastAppliedAnnotation(obj: object): void {
    const target = asObject(obj, "setLastAppliedAnnotation");
    const value = this.encodeRecord(target);
    let metadata = target["metadata"];
    if (!isObject(metadata)) {
      metadata = {};
      target["metadata"] = metadata;
    }
    let annotations = metadata["annotations"];
    if (!isObject(annotations)) {
      annotations = {};
      metadata["annotations"] = annotations;
    }
    annotations[this.annotationKey] = value;
  }

  /** The annotation value `setLastAppliedAnnotation` would store, checked against the size budget. */
  encodeRecord(obj: object): string {
    const target = asObject(obj, "encodeRecord");
    const others = otherAnnotationsBytes(target, this.annotationKey) + Buffer.byteLength(this.annotationKey);
    const budget = ANNOTATIONS_SIZE_LIMIT_BYTES - others;
    let encoded = encodeWithin(this.#record(target, DIGEST_VALUES_FROM_BYTES), budget);
    // Still too large (many medium values): every value a digest would shorten is digested.
    if (encoded.value.length > budget) encoded = encodeWithin(this.#record(target, DIGEST_CHARS), budget);
    if (encoded.value.length > budget) {
      throw new LastAppliedTooLargeError({
        object: refOf(target),
        annotationKey: this.annotationKey,
        annotationsBytes: others + encoded.value.length,
        recordBytes: encoded.value.length,
        uncompressedBytes: encoded.jsonBytes,
        limitBytes: ANNOTATIONS_SIZE_LIMIT_BYTES,
      });
    }
    return encoded.value;
  }

  /**
   * The record as it would be stored: the declaration without our annotation or server-owned
   * metadata, Secret values and long string values digested; a canonical copy (every object's keys in
   * sorted order).
   */
  recordOf(obj: object): JsonObject {
    return this.#record(asObject(obj, "recordOf"), DIGEST_VALUES_FROM_BYTES);
  }

  #record(target: JsonObject, digestFromBytes: number): JsonObject {
    const record = canonicalClone(target) as JsonObject;
    const metadata = record["metadata"];
    if (isObject(metadata)) {
      for (const field of SERVER_METADATA_FIELDS) delete metadata[field];
      const annotations = metadata["annotations"];
      if (isObject(annotations)) {
        delete annotations[this.annotationKey];
        if (Object.keys(annotations).length === 0) delete metadata["annotations"];
      }
      digestLongValues(metadata, digestFromBytes, KEPT_METADATA_FIELDS);
    }
    const kind = resolveKind(stringField(target, "apiVersion"), stringField(target, "kind"));
    if (kind.builtIn && kind.group === "" && kind.kind === "Secret") {
      digestValues(record["data"]);
      digestValues(record["stringData"]);
    }
    digestLongValues(record, digestFromBytes, KEPT_ROOT_FIELDS);
    return record;
  }

  /** The stored original, or undefined when the object has none. Throws LastAppliedUnreadableError if it is corrupt. */
  getOriginalConfiguration(obj: object): JsonObject | undefined {
    const read = this.readOriginal(obj);
    if (read.error) throw read.error;
    return read.record === undefined ? undefined : structuredClone(read.record);
  }

  /** Removes our record (for objects driftless stops managing). Returns whether there was one. */
  removeLastAppliedAnnotation(obj: object): boolean {
    const annotations = annotationsOf(asObject(obj, "removeLastAppliedAnnotation"));
    if (!annotations || !Object.hasOwn(annotations, this.annotationKey)) return false;
    delete annotations[this.annotationKey];
    return true;
  }

  /**
   * For the matcher: the decoded record (shared, must not be modified), or the reason it cannot be
   * read. Never throws for a bad record: an unreadable record is a reason to update, not to stop.
   */
  readOriginal(obj: object): ReadOriginal {
    const value = annotationsOf(asObject(obj, "getOriginalConfiguration"))?.[this.annotationKey];
    if (value === undefined || value === null || value === "") return {};
    if (typeof value !== "string") {
      return { error: new LastAppliedUnreadableError(refOf(obj), this.annotationKey, new TypeError("not a string")) };
    }
    const cached = this.#decoded.get(value);
    if (cached) return { record: cached };
    try {
      const record = decodeRecord(value);
      if (value.length <= DECODE_CACHE_MAX_VALUE_CHARS) {
        if (this.#decoded.size >= DECODE_CACHE_ENTRIES) {
          const oldest = this.#decoded.keys().next();
          if (!oldest.done) this.#decoded.delete(oldest.value);
        }
        this.#decoded.set(value, record);
      }
      return { record };
    } catch (cause) {
      return { error: new LastAppliedUnreadableError(refOf(obj), this.annotationKey, cause) };
    }
  }
}

export function decodeRecord(value: string): JsonObject {
  let json: string;
  if (value.trimStart().startsWith("{")) json = value;
  else if (value.startsWith(COMPRESSED_RECORD_PREFIX)) {
    const bytes = Buffer.from(value.slice(COMPRESSED_RECORD_PREFIX.length), "base64");
    json = brotliDecompressSync(bytes, {
      maxOutputLength: MAX_RECORD_BYTES,
      chunkSize: chunkSizeFor(bytes.length * 8),
    }).toString("utf8");
  } else {
    throw new Error(`unknown record format (expected "${COMPRESSED_RECORD_PREFIX}…" or JSON)`);
  }
  const parsed: unknown = JSON.parse(json);
  if (!isObject(parsed)) throw new Error("the record is not a JSON object");
  return parsed;
}

/**
 * Brotli's default 4 MiB window costs ~1 ms of setup per call, 15 times the work of compressing a
 * typical record; a window just large enough for the input gives the same output size. It depends
 * only on the input length, so the record stays a pure function of the declaration.
 */
function windowBits(length: number): number {
  return Math.min(
    constants.BROTLI_MAX_WINDOW_BITS,
    Math.max(constants.BROTLI_MIN_WINDOW_BITS, Math.ceil(Math.log2(length + 1))),
  );
}

/**
 * zlib's default output chunk is 16 KiB, allocated outside the JS heap on every call and freed only
 * when the garbage collector gets to it; records are mostly far smaller. A chunk near the expected
 * output keeps that churn down (a larger output just takes more chunks).
 */
function chunkSizeFor(expectedBytes: number): number {
  return Math.min(64 * 1024, Math.max(constants.Z_MIN_CHUNK, expectedBytes));
}

function compress(raw: Buffer, quality: number): string {
  const packed = brotliCompressSync(raw, {
    chunkSize: chunkSizeFor(raw.length),
    params: {
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_QUALITY]: quality,
      [constants.BROTLI_PARAM_LGWIN]: windowBits(raw.length),
      [constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
    },
  });
  return COMPRESSED_RECORD_PREFIX + packed.toString("base64");
}

/**
 * Replaces, in place, every string value of `value`'s maps longer than `fromBytes` (UTF-8) by its digest,
 * but those named in `kept` at the top. Lists are left whole: their keys and members are matched by value.
 */
function digestLongValues(value: JsonValue | undefined, fromBytes: number, kept?: ReadonlySet<string>): void {
  if (!isObject(value)) return;
  for (const [key, child] of Object.entries(value)) {
    if (kept?.has(key)) continue;
    if (typeof child === "string") {
      if (longerThan(child, fromBytes)) setOwn(value, key, digestOf(child));
    } else digestLongValues(child, fromBytes);
  }
}

function digestOf(value: string): string {
  return DIGEST_PREFIX + hash("sha256", value, "hex");
}

/** Every string value of a Secret's map, whatever its length: the record must not copy the secret. */
function digestValues(data: JsonValue | undefined): void {
  if (!isObject(data)) return;
  for (const [key, value] of Object.entries(data)) if (typeof value === "string") setOwn(data, key, digestOf(value));
}

/** UTF-8 length > bytes, without encoding the string when its length alone decides (≤ 3 bytes per unit). */
function longerThan(value: string, bytes: number): boolean {
  if (value.length > bytes) return true;
  if (value.length * 3 <= bytes) return false;
  return Buffer.byteLength(value, "utf8") > bytes;
}

/**
 * The canonical JSON of `record`, compressed from COMPRESS_FROM_BYTES up. Quality 9 is fast enough for
 * every update; only a record over `budget` gets the slow, tighter quality 11. Each choice is a pure
 * function of the input, so the value stays deterministic.
 */
function encodeWithin(record: JsonObject, budget: number): { value: string; jsonBytes: number } {
  // The record is a canonical copy already (keys in sorted order).
  const json = JSON.stringify(record);
  const jsonBytes = Buffer.byteLength(json, "utf8");
  const raw = (): Buffer => Buffer.from(json, "utf8");
  let value = jsonBytes < COMPRESS_FROM_BYTES ? json : compress(raw(), 9);
  if (value.length > budget) value = compress(raw(), 11);
  return { value, jsonBytes };
}

function otherAnnotationsBytes(obj: JsonObject, ourKey: string): number {
  let total = 0;
  for (const [key, value] of Object.entries(annotationsOf(obj) ?? {})) {
    if (key === ourKey) continue;
    total += Buffer.byteLength(key) + (typeof value === "string" ? Buffer.byteLength(value) : 0);
  }
  return total;
}

function annotationsOf(obj: JsonObject): JsonObject | undefined {
  const metadata = obj["metadata"];
  const annotations = isObject(metadata) ? metadata["annotations"] : undefined;
  return isObject(annotations) ? annotations : undefined;
}

function asObject(obj: unknown, operation: string): JsonObject {
  if (!isObject(obj))
    throw new InvalidObjectError(`${operation}: expected a Kubernetes object, got ${describeValue(obj)}`);
  return obj;
}

export function describeValue(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
}

function stringField(obj: JsonObject, field: string): string | undefined {
  const value = obj[field];
  return typeof value === "string" ? value : undefined;
}

export function refOf(obj: unknown): ObjectRef {
  if (!isObject(obj)) return {};
  const metadata = isObject(obj["metadata"]) ? obj["metadata"] : {};
  const ref: { apiVersion?: string; kind?: string; namespace?: string; name?: string } = {};
  const apiVersion = stringField(obj, "apiVersion");
  const kind = stringField(obj, "kind");
  const namespace = stringField(metadata, "namespace");
  const name = stringField(metadata, "name");
  if (apiVersion !== undefined) ref.apiVersion = apiVersion;
  if (kind !== undefined) ref.kind = kind;
  if (namespace !== undefined) ref.namespace = namespace;
  if (name !== undefined) ref.name = name;
  return ref;
}
