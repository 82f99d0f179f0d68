import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { it } from "node:test";
import { version } from "./version.ts";

async function scratch(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "driftless-version-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function run(kubeconfig: string): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const code = await version(kubeconfig, (line) => void lines.push(line));
  return { code, lines };
}

/** A kubeconfig naming a loopback port nothing listens on (port 1 needs root to bind). */
const unreachable = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`;

void it("exits 0 with the CLI's version when the cluster does not answer, as nomos version prints the error in its table", async (t) => {
  const file = join(await scratch(t), "kubeconfig");
  await writeFile(file, unreachable);
  const { code, lines } = await run(file);
  assert.equal(code, 0, lines.join("\n"));
  assert.match(lines[1] ?? "", /^driftless CLI +\S+/);
  assert.match(lines[2] ?? "", /^reconciler-manager +unknown \(.*ECONNREFUSED/);
});

void it("exits 0 without a kubeconfig, as nomos says no cluster matches and exits 0", async (t) => {
  const { code, lines } = await run(join(await scratch(t), "absent"));
  assert.equal(code, 0, lines.join("\n"));
  assert.match(lines[2] ?? "", /^reconciler-manager +unknown \(no kubeconfig: .*absent/);
});

void it("exits 1 when the kubeconfig cannot be read, as nomos's `unable to parse kubectl config`", async (t) => {
  const file = join(await scratch(t), "kubeconfig");
  await writeFile(file, "{{{ not yaml\n");
  const { code, lines } = await run(file);
  assert.equal(code, 1, lines.join("\n"));
  assert.match(lines[1] ?? "", /^driftless CLI +\S+/);
});
