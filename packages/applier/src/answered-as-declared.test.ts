import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { Annotator, PatchMaker } from "@driftless/objectmatcher";
import { holdsDeclared } from "./answered-as-declared.ts";
import type { JsonObject } from "./desired.ts";

void describe("holdsDeclared", () => {
  const declared = { metadata: { name: "a", labels: { app: "web" } }, data: { key: "v" }, list: [{ x: 1 }] };

  void it("vouches for an answer that only adds fields", () => {
    const answer = {
      metadata: { name: "a", labels: { app: "web", added: "by-webhook" }, uid: "u", resourceVersion: "7" },
      data: { key: "v", other: "w" },
      list: [{ x: 1 }],
      status: {},
    };
    assert.equal(holdsDeclared(declared, answer), true);
  });

  void it("refuses a changed, missing or differently spelled value", () => {
    assert.equal(holdsDeclared(declared, { ...declared, data: { key: "w" } }), false);
    assert.equal(holdsDeclared(declared, { ...declared, data: {} }), false);
    assert.equal(holdsDeclared(declared, { metadata: declared.metadata, list: declared.list }), false);
    assert.equal(holdsDeclared({ cpu: "1000m" }, { cpu: "1" }), false);
    assert.equal(holdsDeclared({ n: 1 }, { n: "1" }), false);
  });

  void it("requires lists exactly as declared, even where the matcher would merge by key", () => {
    assert.equal(holdsDeclared(declared, { ...declared, list: [{ x: 1, defaulted: true }] }), false);
    assert.equal(holdsDeclared(declared, { ...declared, list: [{ x: 1 }, { x: 2 }] }), false);
    assert.equal(holdsDeclared({ l: [1, 2] }, { l: [2, 1] }), false);
    assert.equal(holdsDeclared({ l: [] }, { l: {} }), false);
  });
});

/** A random JSON tree of the shapes manifests have: maps, lists, strings, numbers, booleans. */
const tree = fc.letrec<{ value: unknown; map: Record<string, unknown> }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom("a", "b", "1000m", "1", ""),
    fc.integer({ min: -2, max: 3 }),
    fc.boolean(),
    fc.array(tie("value"), { maxLength: 3 }),
    tie("map"),
  ),
  map: fc.dictionary(fc.constantFrom("a", "b", "c", "name", "spec"), tie("value"), { maxKeys: 3 }),
}));

/** What a server or webhook might do to the answer: add, change, remove, reorder. */
const edit = fc.record({
  pick: fc.nat(),
  op: fc.constantFrom("add", "change", "remove", "reorder", "none"),
  value: tree.value,
});

function applyEdit(answer: JsonObject, { pick, op, value }: { pick: number; op: string; value: unknown }): void {
  const containers: unknown[] = [];
  const walk = (node: unknown): void => {
    if (typeof node !== "object" || node === null) return;
    containers.push(node);
    for (const child of Object.values(node)) walk(child);
  };
  walk(answer["spec"]);
  const target = containers[pick % Math.max(containers.length, 1)];
  if (target === undefined) return;
  if (Array.isArray(target)) {
    if (op === "add") target.push(value);
    else if (op === "change" && target.length > 0) target[pick % target.length] = value;
    else if (op === "remove") target.pop();
    else if (op === "reorder") target.reverse();
    return;
  }
  const record = target as Record<string, unknown>;
  const keys = Object.keys(record);
  if (op === "add") record[`added${pick % 3}`] = value;
  else if (op === "change" && keys.length > 0) record[keys[pick % keys.length]!] = value;
  else if (op === "remove" && keys.length > 0) delete record[keys[pick % keys.length]!];
}

void describe("property: holdsDeclared never vouches for what the three-way match would change", () => {
  const annotator = new Annotator();
  const matcher = new PatchMaker(annotator);
  const kinds = fc.constantFrom(
    { apiVersion: "v1", kind: "ConfigMap" },
    { apiVersion: "apps/v1", kind: "Deployment" },
    { apiVersion: "example.com/v1", kind: "Widget" },
  );

  void it("for answers to a write of the declaration with its record", () => {
    let vouched = 0;
    let refused = 0;
    fc.assert(
      fc.property(kinds, tree.map, fc.array(edit, { maxLength: 2 }), (kind, spec, edits) => {
        const declared: JsonObject = { ...kind, metadata: { name: "obj", namespace: "ns" }, spec };
        const sent = structuredClone(declared);
        annotator.setLastAppliedAnnotation(sent);
        const answer = structuredClone(sent);
        (answer["metadata"] as JsonObject)["resourceVersion"] = "12";
        for (const e of edits) applyEdit(answer, e);
        if (!holdsDeclared(declared, answer)) {
          refused++;
          return;
        }
        vouched++;
        const result = matcher.calculate(answer, declared);
        assert.equal(result.isEmpty(), true, result.render());
      }),
      { numRuns: 1000 },
    );
    // Both sides must be exercised, or the property proves nothing.
    assert.ok(vouched > 100 && refused > 100, `vouched ${vouched}, refused ${refused}`);
  });
});
