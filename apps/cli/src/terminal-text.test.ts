import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { parse } from "yaml";
import { printable, printableJson, printableLine, printableYaml } from "./terminal-text.ts";

const hostile = "a\x1b]0;pwned\x07b\rc\u009b2Jd\x7f";
// Any C0 control but newline, DEL, or C1.
const controls = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;

void describe("terminal text", () => {
  void it("escapes C0, DEL and C1 controls and keeps newlines", () => {
    assert.equal(printable(`${hostile}\nnext`), "a\\x1b]0;pwned\\x07b\\x0dc\\x9b2Jd\\x7f\nnext");
  });

  void it("escapes line breaks too in a name set into a line", () => {
    assert.equal(printableLine(`a.yaml\n\r${hostile}`), "a.yaml\\x0a\\x0da\\x1b]0;pwned\\x07b\\x0dc\\x9b2Jd\\x7f");
  });

  void it("keeps JSON and YAML parseable to the same values while escaping what their writers leave raw", () => {
    const value = { syncs: [{ message: hostile, plain: "ok" }] };
    const json = printableJson(JSON.stringify(value));
    assert.doesNotMatch(json, controls);
    assert.deepEqual(JSON.parse(json), value);
    const yaml = printableYaml(value);
    assert.doesNotMatch(yaml.replaceAll("\n", ""), controls);
    assert.deepEqual(parse(yaml), value);
    assert.equal(printableYaml({ a: "plain" }), "a: plain\n", "ordinary YAML is written as before");
  });

  void it("driftless vet prints a file name holding an escape sequence escaped", async (t) => {
    const dir = await mkdtemp(join(tmpdir(), "driftless-vet-escape-"));
    t.after(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, "\x1b]0;pwned\x07\x1b[2J.yaml"), "kind: [unclosed\n");
    const main = join(import.meta.dirname, "main.ts");
    const run = await promisify(execFile)(process.execPath, [main, "vet", dir]).then(
      () => assert.fail("vet passed an invalid file"),
      (error: { code?: number; stdout?: string; stderr?: string }) => error,
    );
    assert.equal(run.code, 1, run.stderr);
    // The error is on stderr, as nomos prints it; neither stream carries a control.
    const stderr = run.stderr ?? "";
    assert.ok(stderr.includes("\\x1b]0;pwned\\x07\\x1b[2J.yaml"), stderr);
    for (const text of [stderr, run.stdout ?? ""])
      assert.doesNotMatch(text.replaceAll("\n", ""), controls, JSON.stringify(text));
  });

  void it("driftless vet keeps a file or object name holding line breaks on its line: no line of vet's own is forged", async (t) => {
    const dir = await mkdtemp(join(tmpdir(), "driftless-vet-lines-"));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const forged = "vet: 0 file(s), 0 object(s), 0 local-config skipped, 0 error(s)";
    // A file that does not parse (its name in the message and the file list) and an object whose name is invalid.
    await writeFile(join(dir, `a.yaml\n\n${forged}\nX.yaml`), "kind: [unclosed\n");
    const object = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "b\\n${forged}"\n  namespace: d\n`;
    await writeFile(join(dir, "b.yaml"), object);
    const main = join(import.meta.dirname, "main.ts");
    const run = await promisify(execFile)(process.execPath, [main, "vet", dir]).then(
      () => assert.fail("vet passed an invalid source"),
      (error: { code?: number; stdout?: string; stderr?: string }) => error,
    );
    assert.equal(run.code, 1, run.stderr);
    const stderr = run.stderr ?? "";
    assert.ok(stderr.includes(`a.yaml\\x0a\\x0a${forged}\\x0aX.yaml`), stderr);
    assert.ok(stderr.includes(`b\\x0a${forged}`), stderr);
    const lines = `${stderr}${run.stdout ?? ""}`.split("\n");
    assert.deepEqual(
      lines.filter((l) => l.startsWith(forged) || l.startsWith("X.yaml")),
      [],
      "a name began a line of its own",
    );
  });
});
