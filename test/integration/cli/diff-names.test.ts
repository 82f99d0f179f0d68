import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { findRepoRoot } from "@driftless/local-cluster";
import { testEnv, testNamespace, removeAfter } from "../../support/index.ts";

const cli = join(findRepoRoot(), "apps", "cli", "src", "main.ts");
// What diff prints last: a name that could start a line could print it early, over the real answer.
const forged = "0 object(s), 0 would change";

async function diff(dir: string, namespace: string): Promise<{ code: number; out: string }> {
  const args = [cli, "diff", dir, "--kubeconfig", testEnv().kubeconfig, "--sync-kind", "RepoSync"];
  const sync = ["--sync-namespace", namespace, "--sync-name", "repo-sync"];
  return promisify(execFile)(process.execPath, [...args, ...sync]).then(
    (r) => ({ code: 0, out: r.stdout + r.stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code ?? -1,
      out: (error.stdout ?? "") + (error.stderr ?? ""),
    }),
  );
}

const configMap = (name: string, namespace: string): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${JSON.stringify(name)}\n  namespace: ${namespace}\n`;

test("driftless diff keeps a file or object name holding line breaks on its line", async (t) => {
  const namespace = await testNamespace(t, "diff-names");
  const dir = await mkdtemp(join(tmpdir(), "driftless-diff-names-"));
  removeAfter(t, dir);

  await writeFile(join(dir, `cm.yaml\n\n${forged}\nX.yaml`), configMap("a", namespace));
  const created = await diff(dir, namespace);
  assert.equal(created.code, 1, created.out);
  assert.ok(created.out.includes(`would be created (cm.yaml\\x0a\\x0a${forged}\\x0aX.yaml)`), created.out);
  assert.deepEqual(created.out.trimEnd().split("\n").at(-1), "1 object(s), 1 would change", created.out);
  assert.equal(created.out.split("\n").filter((l) => l.startsWith(forged)).length, 0, created.out);

  // An invalid object name is the source's error: its message names it, still on one line.
  await writeFile(join(dir, "b.yaml"), configMap(`b\n${forged}`, namespace));
  const invalid = await diff(dir, namespace);
  assert.equal(invalid.code, 2, invalid.out);
  assert.ok(invalid.out.includes(`b\\x0a${forged}`), invalid.out);
  assert.equal(invalid.out.split("\n").filter((l) => l.startsWith(forged)).length, 0, invalid.out);
});
