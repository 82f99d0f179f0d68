/**
 * The CLI renders a kustomization before it checks or prints a source, with the real kustomize the
 * reconciler uses: hydrate prints what a pass would apply, vet reports a broken kustomization.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { findRepoRoot } from "@driftless/local-cluster";

const root = findRepoRoot();
const cli = join(root, "apps", "cli", "src", "main.ts");
const fixtures = join(root, "test", "fixtures", "kustomize");

function driftless(...args: string[]): Promise<{ code: number | null; stdout: string; all: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let all = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
      all += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => (all += c.toString()));
    // On 'close', not 'exit': 'exit' may come before the pipes are drained.
    child.once("close", (code) => resolve({ code, stdout, all }));
  });
}

test("driftless hydrate renders a kustomize overlay (generator, namePrefix, commonLabels) as a reconciler would", async () => {
  // A relative DIR, as people type it.
  const result = await driftless("hydrate", relative(root, join(fixtures, "overlay")));
  assert.equal(result.code, 0, result.all);
  // Checked by hand: the prefix on both, the label on both, the generator's content hash in its name, and
  // kustomize's origin annotation (Config Sync adds buildMetadata: [originAnnotations]; nomos hydrate keeps it).
  assert.equal(result.stdout, await readFile(join(fixtures, "overlay.expected.yaml"), "utf8"));
  assert.match(result.stdout, /name: p-gen-[a-z0-9]{10}\n/);
});

test("driftless vet of a broken kustomization reports KNV1068 with kustomize's output and exits 1", async () => {
  const result = await driftless("vet", join(fixtures, "broken"));
  assert.equal(result.code, 1);
  assert.match(result.all, /KNV1068: failed to run kustomize build in .*broken.*missing\.yaml/);
});

test("driftless vet of a valid kustomization checks the rendered objects", async () => {
  const result = await driftless("vet", join(fixtures, "overlay"));
  assert.equal(result.code, 0, result.all);
  assert.match(result.all, /2 object\(s\)/);
});

test("driftless vet and hydrate refuse a kustomization read as a hierarchy, in nomos's words", async () => {
  for (const verb of ["vet", "hydrate"]) {
    const result = await driftless(verb, join(fixtures, "overlay"), "--source-format", "hierarchy");
    assert.equal(result.code, 1, result.all);
    assert.equal(result.stdout, "");
    assert.match(result.all, /^Error: source-format must be unstructured when Kustomization is needed$/m);
  }
});
