import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), "driftless-ropes-"));
  await mkdir(join(dir, "repo"));
  // Flow-style metadata sends each file through the general parser; the quoted value is what it builds as a rope.
  const value = "x".repeat(900);
  for (let i = 0; i < 5000; i++) {
    await writeFile(
      join(dir, "repo", `cm-${i}.yaml`),
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-${i}, namespace: ns}\ndata:\n  k: "${value}"\n`,
    );
  }
});
after(() => rm(dir, { recursive: true, force: true }));

void describe("reading a source with the general YAML parser", () => {
  void it("keeps quoted values flat: 5,000 ConfigMaps with 900-character quoted values read in a 64 MiB heap", () => {
    const reader = join(import.meta.dirname, "read-manifests.ts");
    const script = `const { readManifests } = await import(${JSON.stringify(reader)});
      const set = await readManifests(${JSON.stringify(join(dir, "repo"))}, { scope: { kind: "RootSync" } });
      console.log(set.manifests.length);`;
    const run = spawnSync(process.execPath, ["--max-old-space-size=64", "--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    assert.equal(run.status, 0, run.stderr.slice(0, 500));
    assert.equal(run.stdout.trim(), "5000");
  });
});
