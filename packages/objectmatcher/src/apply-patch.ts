/**
 * Applies a result's patch to a live object, as the API server would: a preview of the update, and
 * the check our property tests make that the patch really brings `current` to the declared state.
 */
import { InvalidObjectError } from "./errors.ts";
import { cloneJson, isObject } from "./json.ts";
import type { JsonObject } from "./json.ts";
import { applyMergePatch, applyStrategicMergePatch } from "./patch-apply.ts";
import type { PatchResult } from "./result.ts";

/** `current` with `result.patch` applied; `current` itself is not modified. */
export function applyPatch(current: object, result: PatchResult): JsonObject {
  const live = cloneJson(current);
  if (!isObject(live)) throw new InvalidObjectError("applyPatch: current must be an object");
  if (result.patchType === "merge") {
    const merged = applyMergePatch(live, result.patch);
    return isObject(merged) ? merged : {};
  }
  return applyStrategicMergePatch(live, result.patch, result.kindInfo.schema);
}
