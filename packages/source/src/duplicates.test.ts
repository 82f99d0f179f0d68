import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { findDuplicates, MAX_LISTED_PATHS } from "./duplicates.ts";
import type { ObjectId } from "./object-id.ts";

const settings: ObjectId = { group: "", kind: "ConfigMap", namespace: "team-a", name: "settings" };
const declared = (sourcePath: string, id: ObjectId = settings) => ({ id, sourcePath });

void describe("findDuplicates", () => {
  void it("reports nothing when every object is declared once", () => {
    assert.deepEqual(findDuplicates([declared("a.yaml"), declared("b.yaml", { ...settings, name: "other" })]), []);
  });

  void it("names every file, each once and in reading order, with how often it declares the object", () => {
    const [error, ...rest] = findDuplicates([
      declared("a.yaml"),
      declared("b/c.yaml"),
      declared("a.yaml"),
      declared("d.yaml", { ...settings, name: "other" }),
    ]);
    assert.equal(rest.length, 0);
    assert.equal(error?.code, "KNV1029");
    assert.equal(
      error?.message,
      'ConfigMap "team-a/settings" is declared 3 times, in a.yaml (2 times), b/c.yaml; keep exactly one',
    );
    assert.deepEqual(error?.sourcePaths, ["a.yaml", "b/c.yaml"]);
  });

  void it("lists the first files in the message and counts the rest, while the resources keep every one", () => {
    const longDir = "very-long-directory-name/".repeat(120); // ~3 KiB per path
    const paths = Array.from({ length: 2_000 }, (_, i) => `${longDir}file-${i}.yaml`);
    const [error] = findDuplicates(paths.map((path) => declared(path)));
    assert.ok(error);
    const listed = paths.slice(0, MAX_LISTED_PATHS).join(", ");
    assert.equal(
      error.message,
      `ConfigMap "team-a/settings" is declared 2000 times, in ${listed} and ${2_000 - MAX_LISTED_PATHS} more files; keep exactly one`,
    );
    assert.ok(!error.message.includes(`file-${MAX_LISTED_PATHS}.yaml`));
    assert.ok(error.message.length < (MAX_LISTED_PATHS + 1) * 3_100, `${error.message.length} characters`);
    assert.equal(error.resources.length, 2_000);
    assert.deepEqual(error.sourcePaths, paths);
  });

  void it("says 'file' for a single one more, and lists exactly MAX_LISTED_PATHS files without a count", () => {
    const files = (n: number) => Array.from({ length: n }, (_, i) => declared(`f${i}.yaml`));
    const [atLimit] = findDuplicates(files(MAX_LISTED_PATHS));
    assert.doesNotMatch(atLimit?.message ?? "", /more file/);
    assert.match(atLimit?.message ?? "", new RegExp(`f${MAX_LISTED_PATHS - 1}\\.yaml; keep exactly one$`));
    const [oneOver] = findDuplicates(files(MAX_LISTED_PATHS + 1));
    assert.match(
      oneOver?.message ?? "",
      new RegExp(`f${MAX_LISTED_PATHS - 1}\\.yaml and 1 more file; keep exactly one$`),
    );
  });
});
