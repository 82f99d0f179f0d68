import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { findRepoRoot } from "@driftless/local-cluster";
import { removeAfter, removeQuietly } from "../../support/index.ts";

const cli = join(findRepoRoot(), "packages", "local-cluster", "src", "cli.ts");

/** Runs `cluster:up` with a changed environment; resolves with its exit code and output. */
function clusterUp(
  env: NodeJS.ProcessEnv,
  stateDir: string,
): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, [cli, "up"], {
      env: { ...env, DRIFTLESS_CLUSTER_DIR: stateDir },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    // On 'close', not 'exit': 'exit' may come before the pipes are drained.
    child.once("close", (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
  });
}

test("cluster:up without Go fails at once with one line saying Go is missing", async (t) => {
  const stateDir = await mkdtemp(join(tmpdir(), "driftless-nogo-"));
  removeAfter(t, stateDir);
  // Keep node, bash and coreutils on PATH; drop every folder that holds a `go`.
  const path = [dirname(process.execPath), "/usr/bin", "/bin"].join(":");
  const result = await clusterUp({ PATH: path, HOME: process.env["HOME"] ?? "/root" }, stateDir);
  assert.equal(result.code, 1);
  assert.equal(result.stdout, "", "it printed an export line although it failed");
  const lines = result.stderr.trim().split("\n");
  assert.equal(lines.length, 1, `expected one line, got: ${result.stderr}`);
  assert.match(lines[0] ?? "", /Go is not installed/);
  assert.ok(result.ms < 10_000, `took ${result.ms} ms`);
});

test("cluster:up with the Go module proxy turned off fails at once with one line saying so", async (t) => {
  const stateDir = await mkdtemp(join(tmpdir(), "driftless-noproxy-"));
  const binCache = await mkdtemp(join(tmpdir(), "driftless-nocache-"));
  t.after(async () => {
    await removeQuietly(stateDir);
    await removeQuietly(binCache);
  });
  // An empty binary cache forces a build, which must refuse without a proxy rather than hang.
  const result = await clusterUp({ ...process.env, GOPROXY: "off", DRIFTLESS_BIN_CACHE: binCache }, stateDir);
  assert.equal(result.code, 1);
  const lines = result.stderr.trim().split("\n");
  assert.equal(lines.length, 1, `expected one line, got: ${result.stderr}`);
  assert.match(lines[0] ?? "", /GOPROXY is off/);
});
