import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { describe, it } from "node:test";
import { hydrate } from "./hydrate.ts";
import { vet } from "./vet.ts";

const fixtures = join(import.meta.dirname, "..", "..", "..", "..", "test", "fixtures", "hierarchy");

async function files(dir: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    found.set(relative(dir, path), await readFile(path, "utf8"));
  }
  return found;
}

void describe("driftless hydrate", () => {
  // repo.expected/ is what `nomos hydrate --no-api-server-check --source-format hierarchy` writes for
  // repo/ (its defaultcluster/ folder), byte for byte, and was read through by hand against the rules.
  void it("writes a hierarchical source's objects, inherited into their namespaces, as nomos hydrate does", async (t) => {
    const out = await mkdtemp(join(tmpdir(), "driftless-hydrate-"));
    t.after(() => rm(out, { recursive: true, force: true }));
    const lines: string[] = [];
    const code = await hydrate(
      { dir: join(fixtures, "repo"), format: "hierarchy", output: out },
      (line) => void lines.push(line),
    );
    assert.equal(code, 0, lines.join("\n"));
    const expected = await files(join(fixtures, "repo.expected"));
    const actual = await files(out);
    assert.deepEqual([...actual.keys()].sort(), [...expected.keys()].sort());
    for (const [path, content] of expected) assert.equal(actual.get(path), content, path);
  });

  void it("prints nothing and exits 1 with the errors of an invalid source", async () => {
    const lines: string[] = [];
    const code = await hydrate(
      { dir: join(fixtures, "errors", "knv1020-namespace-name-not-directory"), format: "hierarchy" },
      (line) => void lines.push(line),
    );
    assert.equal(code, 1);
    assert.match(lines.join("\n"), /^KNV1020: namespaces\/web\/namespace\.yaml: /);
  });
});

void describe("driftless vet", () => {
  void it("reports each hierarchy fixture's error with the code its directory is named after and the file", async () => {
    for (const name of (await readdir(join(fixtures, "errors"))).sort()) {
      const code = name.split("-")[0]?.toUpperCase() ?? "";
      const lines: string[] = [];
      const exit = await vet(
        join(fixtures, "errors", name),
        { format: "hierarchy", scope: { kind: "RootSync" } },
        (line) => void lines.push(line),
      );
      assert.equal(exit, 1, name);
      const errors = lines.filter((l) => l.startsWith("KNV"));
      assert.ok(errors.length > 0 && errors.every((l) => l.startsWith(`${code}: `)), `${name}:\n${lines.join("\n")}`);
      assert.ok(
        errors.every((l) => / \((system|cluster|clusterregistry|namespaces)[/)]/.test(l)),
        `${name}: no path`,
      );
    }
  });

  void it("passes the valid hierarchy fixture", async () => {
    const lines: string[] = [];
    const exit = await vet(join(fixtures, "repo"), { format: "hierarchy", scope: { kind: "RootSync" } }, (line) => {
      lines.push(line);
    });
    assert.equal(exit, 0, lines.join("\n"));
    assert.match(lines.at(-1) ?? "", /22 object\(s\), 0 local-config skipped, 0 error\(s\)/);
  });

  void it("runs the duplicate check the reconciler runs (KNV1029), in an unstructured source too", async (t) => {
    const dir = await mkdtemp(join(tmpdir(), "driftless-vet-"));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: same, namespace: default}\n";
    await writeFile(join(dir, "a.yaml"), cm);
    await writeFile(join(dir, "b.yaml"), cm);
    const lines: string[] = [];
    const exit = await vet(
      dir,
      { format: "unstructured", scope: { kind: "RootSync" } },
      (line) => void lines.push(line),
    );
    assert.equal(exit, 1);
    assert.match(lines.join("\n"), /KNV1029: .*a\.yaml, b\.yaml/);
  });
});
