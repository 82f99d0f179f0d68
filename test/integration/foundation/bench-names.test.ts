import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { findRepoRoot } from "@driftless/local-cluster";

const root = findRepoRoot();
const bench = join(root, "scripts", "bench.ts");

function runBench(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [bench, ...args], { cwd: root, encoding: "utf8" });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** Every `npm run bench NAME` the README and docs/ tell a reader to run. */
function documentedBenchNames(): Set<string> {
  const docs = [
    join(root, "README.md"),
    ...readdirSync(join(root, "docs"), { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".md"))
      .map((f) => join(root, "docs", f)),
  ];
  const names = new Set<string>();
  for (const file of docs)
    for (const match of readFileSync(file, "utf8").matchAll(/npm run bench ([a-z][a-z0-9-]*)/g))
      if (match[1] !== undefined) names.add(match[1]);
  return names;
}

test("every benchmark the docs name is one `npm run bench NAME` runs", () => {
  const listed = runBench("--list");
  assert.equal(listed.status, 0, listed.stderr);
  const names = new Set(listed.stdout.trim().split("\n"));
  const documented = documentedBenchNames();
  assert.ok(documented.size > 5, `found only ${[...documented].join(", ")} in the docs`);
  const missing = [...documented].filter((name) => !names.has(name));
  assert.deepEqual(missing, [], `documented but not run by npm run bench NAME (it has ${[...names].join(", ")})`);
});

test("`npm run bench` with an unknown name fails and names the benchmarks, where it ran nothing and passed", () => {
  const run = runBench("no-such-bench");
  assert.equal(run.status, 2);
  assert.equal(run.stdout, "", "it started a benchmark");
  assert.match(run.stderr, /no benchmark named "no-such-bench"; one of: .*\bfetch\b/);
});
