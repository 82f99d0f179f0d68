import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SourceLimits } from "./limits.ts";
import { parseManifestText } from "./parse.ts";
import { readManifests } from "./read-manifests.ts";
import { withTree } from "./testing.ts";

/** A ConfigMap whose `data` holds one anchored value of `size` characters and `aliases` aliases of it. */
function aliasBomb(name: string, size: number, aliases: number): string {
  let text = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  v0: &big "${"x".repeat(size)}"\n`;
  for (let i = 1; i <= aliases; i++) text += `  v${i}: *big\n`;
  return text;
}

/** A document whose `spec` nests `depth - 1` block mappings, so the document is `depth` deep. */
function deepBlock(depth: number, leaf = "x"): string {
  let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\nspec:\n";
  for (let i = 1; i < depth - 1; i++) text += `${"  ".repeat(i)}k:\n`;
  return `${text}${"  ".repeat(depth - 1)}k: ${leaf}\n`;
}

const header = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\n";

function onlyError(text: string, path: string) {
  const { documents, errors } = parseManifestText(text, path);
  assert.equal(documents.length, 0);
  assert.equal(errors.length, 1, errors.map((e) => e.message).join("\n"));
  const [error] = errors;
  assert.ok(error);
  assert.equal(error.code, "KNV1006");
  assert.equal(error.errorClass, "terminal");
  assert.deepEqual(error.sourcePaths, [path]);
  return error;
}

void describe("source limits", () => {
  void it("refuses a file whose YAML aliases would add more than 1 MiB once expanded, naming the file", () => {
    // 1.1 MB written once and aliased 99 times: under the library's alias count, ~104 MiB expanded.
    const error = onlyError(aliasBomb("bomb", 1_100_000, 99), "apps/bomb.yaml");
    assert.equal(error.name, "ManifestLimitError");
    assert.match(
      error.message,
      /^apps\/bomb\.yaml: YAML aliases expand this file by 103\.9 MiB, over the limit of 1 MiB/,
    );
  });

  void it("refuses nested aliases (billion laughs) by the characters they add, before expanding them", () => {
    let text = `${header}a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n`;
    let previous = "a";
    for (const name of "bcdefghi") {
      text += `${name}: &${name} [${Array<string>(9).fill(`*${previous}`).join(", ")}]\n`;
      previous = name;
    }
    assert.match(onlyError(text, "lol.yaml").message, /YAML aliases expand this file by \d+(\.\d)? MiB/);
  });

  void it("accepts aliases that de-duplicate a manifest and reports what they add", () => {
    const text =
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: &l {app: web, tier: front}\n  annotations: *l\n";
    const parsed = parseManifestText(text, "a.yaml");
    assert.deepEqual(parsed.errors, []);
    assert.deepEqual(parsed.documents[0]?.value["metadata"], {
      name: "a",
      labels: { app: "web", tier: "front" },
      annotations: { app: "web", tier: "front" },
    });
    // One for the mapping, then the characters of its keys and values.
    assert.equal(parsed.aliasChars, 1 + "apptierwebfront".length);
    assert.deepEqual(parseManifestText(aliasBomb("ok", 10_100, 99), "ok.yaml").errors, []);
  });

  void it("refuses a document nested deeper than 100 levels, in block or flow YAML and in JSON, naming the file", () => {
    const limit = SourceLimits.maxDepth;
    // Block YAML this deep goes past the fast path's limit to the general parser.
    assert.deepEqual(parseManifestText(deepBlock(limit), "ok.yaml").errors, []);
    assert.deepEqual(parseManifestText(deepBlock(limit - 1, "{}"), "ok.yaml").errors, []);
    const block = onlyError(deepBlock(limit + 1), "deep/block.yaml");
    assert.equal(block.name, "ManifestLimitError");
    assert.match(
      block.message,
      /^deep\/block\.yaml: nested deeper than the limit of 100 levels \(at line \d+, column \d+\)$/,
    );
    assert.equal(onlyError(deepBlock(limit, "{}"), "empty.yaml").name, "ManifestLimitError");

    // Far past where the YAML library's recursion and every later walk of the value would overflow the stack.
    const flow = `${header}spec: ${"[".repeat(50_000)}${"]".repeat(50_000)}\n`;
    assert.match(onlyError(flow, "flow.yaml").message, /^flow\.yaml: nested deeper than the limit of 100 levels/);
    const json = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"spec":${"[".repeat(1e5)}${"]".repeat(1e5)}}`;
    assert.equal(onlyError(json, "deep.json").message, "deep.json: nested deeper than the limit of 100 levels");
    const shallowJson = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"spec":${"[".repeat(98)}${"]".repeat(98)}}`;
    assert.deepEqual(parseManifestText(shallowJson, "ok.json").errors, []);
  });

  void it("counts an alias's nesting where it is used", () => {
    // Written out, neither line nests past 61 levels; expanded, b is 1 + 40 + 60 deep.
    const anchored = `${header}a: &d ${"[".repeat(60)}${"]".repeat(60)}\n`;
    assert.deepEqual(parseManifestText(`${anchored}b: *d\n`, "ok.yaml").errors, []);
    const error = onlyError(`${anchored}b: ${"[".repeat(40)}*d${"]".repeat(40)}\n`, "a.yaml");
    assert.match(error.message, /^a\.yaml: nested deeper than the limit of 100 levels/);
  });

  void it("reports an alias inside the node it names as invalid YAML instead of overflowing the stack", () => {
    for (const text of [`${header}a: &x [*x]\n`, `${header}a: &x {b: {c: *x}}\n`]) {
      const error = onlyError(text, "self.yaml");
      assert.equal(error.name, "ManifestParseError");
      assert.match(
        error.message,
        /^self\.yaml: invalid YAML at line 4, column \d+: an alias refers to a node that contains it$/,
      );
    }
  });

  void it("refuses the file that takes a source past 32 MiB of alias expansion, and no file before it", async () => {
    // Each file adds 999,900 characters, just under the per-file limit; the 34th crosses 32 MiB.
    const files: Record<string, string> = { "z-plain.yaml": `${header}data: {a: b}\n` };
    for (let i = 0; i < 34; i++) {
      const name = `f${String(i).padStart(2, "0")}`;
      files[`${name}.yaml`] = aliasBomb(name, 10_100, 99);
    }
    await withTree(files, async (dir) => {
      const set = await readManifests(dir);
      assert.deepEqual(
        set.errors.map((e) => [e.code, e.sourcePaths[0], e.name]),
        [["KNV1006", "f33.yaml", "ManifestLimitError"]],
      );
      assert.match(
        set.errors[0]?.message ?? "",
        /^f33\.yaml: YAML aliases in this file take the source over the limit of 32 MiB/,
      );
      assert.equal(set.manifests.length, 34);
    });
  });
});
