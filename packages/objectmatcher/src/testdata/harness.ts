/** Helpers for scenario tests: build live objects with a last-applied record, run the matcher, edit JSON by path. */
import assert from "node:assert/strict";
import { applyPatch } from "../apply-patch.ts";
import { formatPath } from "../changes.ts";
import { isObject } from "../json.ts";
import type { JsonArray, JsonObject, JsonValue } from "../json.ts";
import { Annotator } from "../last-applied.ts";
import { PatchMaker } from "../patch-maker.ts";
import type { CalculateOptions } from "../patch-maker.ts";
import type { PatchResult } from "../result.ts";

export const annotator = new Annotator();
export const maker = new PatchMaker(annotator);

/** `live` carrying the last-applied record of `applied` (what we sent last time), as the server would keep it. */
export function withRecord(live: JsonObject, applied: JsonObject | undefined): JsonObject {
  if (!applied) return live;
  const sent = structuredClone(applied);
  annotator.setLastAppliedAnnotation(sent);
  const record = obj(obj(sent, "metadata"), "annotations")[annotator.annotationKey] ?? null;
  const metadata = obj(live, "metadata");
  metadata["annotations"] = {
    ...(isObject(metadata["annotations"]) ? metadata["annotations"] : {}),
    [annotator.annotationKey]: record,
  };
  return live;
}

/** The object at a dotted path (numeric segments index lists); creates missing maps. */
export function at(root: JsonObject, path: string): JsonObject {
  let node: JsonValue = root;
  for (const segment of path.split(".")) {
    if (Array.isArray(node)) node = node[Number(segment)] ?? null;
    else if (isObject(node)) {
      const next: JsonValue | undefined = node[segment];
      if (next === undefined) node[segment] = {};
      node = node[segment] ?? null;
    }
  }
  assert.ok(isObject(node), `${path} is not an object`);
  return node;
}

export function list(root: JsonObject, path: string): JsonArray {
  const parts = path.split(".");
  const field = parts.pop() ?? "";
  const parent = parts.length ? at(root, parts.join(".")) : root;
  const value = parent[field];
  assert.ok(Array.isArray(value), `${path} is not a list`);
  return value;
}

export function obj(root: JsonObject, field: string): JsonObject {
  const value = root[field];
  assert.ok(isObject(value), `${field} is not an object`);
  return value;
}

export function edit(root: JsonObject, change: (o: JsonObject) => void): JsonObject {
  change(root);
  return root;
}

export function changedPaths(result: PatchResult): string[] {
  return result.changes.map((c) => formatPath(c.path));
}

export interface Scenario {
  /** The behaviour, as a sentence. */
  readonly name: string;
  readonly live: () => JsonObject;
  readonly declared: () => JsonObject;
  /** What we applied last time; defaults to the declaration itself. `null`: the object has no record. */
  readonly applied?: (() => JsonObject) | null;
  readonly expect: "match" | "update";
  /** For updates: exactly these changed paths. */
  readonly paths?: readonly string[];
  readonly options?: CalculateOptions;
}

export function runScenario(s: Scenario): PatchResult {
  const declared = s.declared();
  const applied = s.applied === null ? undefined : (s.applied ?? s.declared)();
  const live = withRecord(s.live(), applied);
  const result = maker.calculate(live, declared, s.options);
  if (s.expect === "match") {
    assert.equal(result.isEmpty(), true, `expected no update, got:\n${result.render()}`);
    assert.deepEqual(result.patch, {});
    return result;
  }
  assert.equal(result.isEmpty(), false, "expected an update, the matcher found none");
  if (s.paths) assert.deepEqual(changedPaths(result), [...s.paths].sort(), result.render());
  // The patch must bring the live object to the declared state.
  const patched = applyPatch(live, result);
  const again = maker.calculate(patched, declared, s.options);
  assert.equal(again.isEmpty(), true, `after applying ${JSON.stringify(result.patch)}:\n${again.render()}`);
  return result;
}
