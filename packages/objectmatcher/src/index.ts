/**
 * @driftless/objectmatcher — decides, object by object, whether the live object needs an update to
 * match what Git declares, from three inputs: the original (our last-applied record, kept in an
 * annotation on the object), the modified (the declaration) and the current (the live object, with
 * the server's defaults and other actors' additions). Pure TypeScript, no cluster code.
 *
 * @example
 * ```ts
 * import { Annotator, CustomResourceSchemaRegistry, PatchMaker } from "@driftless/objectmatcher";
 *
 * const annotator = new Annotator(); // key: LAST_APPLIED_ANNOTATION, never kubectl's
 * const schemas = new CustomResourceSchemaRegistry(); // custom resources' list/map semantics
 * schemas.setGroupVersion("example.com/v1", await get("/openapi/v3/apis/example.com/v1"));
 * const maker = new PatchMaker(annotator, { schemas });
 *
 * const result = maker.calculate(live, declared); // options: { ignoreStatus, ignoreFields }
 * if (!result.isEmpty()) {
 *   log.info(result.render()); // "apps/v1 Deployment shop/web: 1 change\n  ~ spec.replicas: 2 -> 3"
 *   annotator.setLastAppliedAnnotation(declared); // throws LastAppliedTooLargeError past 256 KiB
 *   await client.replace({ ...declared, metadata: { ...declared.metadata, resourceVersion } });
 *   // or: client.patch(result.patch, PATCH_CONTENT_TYPE[result.patchType])
 * }
 * ```
 */
export {
  Annotator,
  ANNOTATIONS_SIZE_LIMIT_BYTES,
  COMPRESSED_RECORD_PREFIX,
  COMPRESS_FROM_BYTES,
  LAST_APPLIED_ANNOTATION,
} from "./last-applied.ts";
export { PatchMaker } from "./patch-maker.ts";
export type { CalculateOptions, PatchMakerOptions } from "./patch-maker.ts";
export { CustomResourceSchemaRegistry, schemasFromCrd, schemasFromOpenApi } from "./openapi.ts";
export { PatchResult } from "./result.ts";
export { applyPatch } from "./apply-patch.ts";
export { renderResult } from "./render.ts";
export type { Renderable, RenderOptions } from "./render.ts";
export { ChangeOp, formatPath } from "./changes.ts";
export type { Change, PathSegment } from "./changes.ts";
export { PATCH_CONTENT_TYPE, PatchType, builtInGroupKinds, resolveKind } from "./kinds.ts";
export type { CustomResourceSchemas, KindInfo } from "./kinds.ts";
export type { FieldSchema, ListType } from "./schema.ts";
export type { FieldPath } from "./normalize.ts";
export { canonicalQuantity, parseQuantity, quantitiesEqual } from "./quantity.ts";
export type { Quantity } from "./quantity.ts";
export {
  InvalidObjectError,
  LastAppliedTooLargeError,
  LastAppliedUnreadableError,
  ObjectMatcherErrorReason,
} from "./errors.ts";
export type { ObjectRef } from "./errors.ts";
export { canonicalJson } from "./json.ts";
export type { JsonArray, JsonObject, JsonScalar, JsonValue } from "./json.ts";
