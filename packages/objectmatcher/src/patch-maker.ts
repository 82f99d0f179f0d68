/**
 * The entry point of a match: resolve the kind, read the last-applied record, normalise, run the
 * three-way comparison. Pure and synchronous; the reconciler calls it for every object on every pass.
 */
import { ChangeOp } from "./changes.ts";
import type { Change } from "./changes.ts";
import { InvalidObjectError } from "./errors.ts";
import { isObject } from "./json.ts";
import type { JsonObject } from "./json.ts";
import { resolveKind } from "./kinds.ts";
import type { CustomResourceSchemas } from "./kinds.ts";
import type { FieldSchema } from "./schema.ts";
import { Annotator, describeValue, refOf } from "./last-applied.ts";
import { normalizeObject, toSegments } from "./normalize.ts";
import type { FieldPath, NormalizeContext } from "./normalize.ts";
import { PatchResult } from "./result.ts";
import { threeWay } from "./three-way.ts";

export interface CalculateOptions {
  /** Leave `status` out of the comparison (default true): it is written by controllers, not declared. */
  readonly ignoreStatus?: boolean;
  /**
   * Further fields to leave out, for values another controller owns (an HPA's `spec.replicas`, an
   * injected annotation): `"spec.replicas"` or `["metadata", "annotations", "example.com/x"]`;
   * `*` matches any key or list item.
   */
  readonly ignoreFields?: readonly FieldPath[];
}

export interface PatchMakerOptions {
  /**
   * Where to find the schemas of custom resources (a `CustomResourceSchemaRegistry`, filled from the API
   * server's OpenAPI v3 documents): their keyed lists, sets and atomic maps then merge as the server
   * merges them. A custom resource without one compares every list whole.
   */
  readonly schemas?: CustomResourceSchemas;
}

export class PatchMaker {
  readonly annotator: Annotator;
  readonly schemas: CustomResourceSchemas | undefined;
  // Normalising the original again on every pass is wasted work: the annotator keeps decoded records
  // while their annotation is unchanged, and we keep their normalised form alongside (frozen, shared).
  readonly #normalizedOriginals = new WeakMap<
    JsonObject,
    Map<FieldSchema, [JsonObject | undefined, JsonObject | undefined]>
  >();

  constructor(annotator: Annotator = new Annotator(), options: PatchMakerOptions = {}) {
    this.annotator = annotator;
    this.schemas = options.schemas;
  }

  /** Does `current` (the live object) need an update to match `modified` (the declaration)? */
  calculate(current: object, modified: object, options: CalculateOptions = {}): PatchResult {
    if (!isObject(current))
      throw new InvalidObjectError(`calculate: current must be an object, got ${describeValue(current)}`);
    if (!isObject(modified))
      throw new InvalidObjectError(`calculate: modified must be an object, got ${describeValue(modified)}`);
    const kind = resolveKind(
      stringOf(modified["apiVersion"]) ?? stringOf(current["apiVersion"]),
      stringOf(modified["kind"]) ?? stringOf(current["kind"]),
      this.schemas,
    );
    const ignoreFields = (options.ignoreFields ?? []).map(toSegments);
    const ctx: NormalizeContext = {
      kind,
      annotationKey: this.annotator.annotationKey,
      ignoreStatus: options.ignoreStatus ?? true,
      ignoreFields,
    };
    const read = this.annotator.readOriginal(current);
    const original = read.record ? this.#normalizeOriginal(read.record, ctx) : undefined;
    const normalizedModified = normalizeObject(modified, ctx);
    // Ignored fields must also vanish from the live side, where atomic lists compare whole.
    const live: JsonObject = ignoreFields.length > 0 ? normalizeObject(current, ctx) : current;
    const changes: Change[] = threeWay({ original, modified: normalizedModified, current: live, kind });
    if (read.error) {
      // Without a readable record we cannot see removals; an update rewrites it, so ask for one.
      changes.unshift({ op: ChangeOp.Record, path: ["metadata", "annotations", this.annotator.annotationKey] });
    }
    return new PatchResult({
      changes,
      kind,
      identity: { ...refOf(current), ...refOf(modified) },
      original,
      modified: normalizedModified,
      liveObject: current,
      normalize: ctx,
    });
  }

  #normalizeOriginal(record: JsonObject, ctx: NormalizeContext): JsonObject {
    if (ctx.ignoreFields.length > 0) return normalizeObject(record, ctx);
    let bySchema = this.#normalizedOriginals.get(record);
    if (!bySchema) {
      bySchema = new Map();
      this.#normalizedOriginals.set(record, bySchema);
    }
    // Normalising depends on the kind's schema (one object per kind; a custom resource's changes with
    // its CRD) and on ignoreStatus.
    let pair = bySchema.get(ctx.kind.schema);
    if (!pair) {
      pair = [undefined, undefined];
      bySchema.set(ctx.kind.schema, pair);
    }
    const slot = ctx.ignoreStatus ? 0 : 1;
    let normalized = pair[slot];
    if (!normalized) {
      normalized = deepFreeze(normalizeObject(record, ctx));
      pair[slot] = normalized;
    }
    return normalized;
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

function stringOf(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}
