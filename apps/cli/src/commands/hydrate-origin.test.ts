import assert from "node:assert/strict";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { it } from "node:test";
import { hydrate } from "./hydrate.ts";
import { onRendered } from "./rendered.ts";

// `nomos hydrate` builds a kustomization as the reconciler does, origin annotations asked for, and
// keeps kustomize's annotation in what it writes (it strips only Config Sync's own prefixes).
void it("hydrates a kustomization's objects with kustomize's origin annotation, paths relative to the kustomization, and leaves the kustomization as it was", async (t) => {
  const repo = await mkdtemp(join(tmpdir(), "driftless-hydrate-origin-"));
  t.after(() => rm(repo, { recursive: true, force: true }));
  const write = async (path: string, text: string): Promise<void> => {
    await mkdir(dirname(join(repo, path)), { recursive: true });
    await writeFile(join(repo, path), text);
  };
  // A repository (its root is where kustomize may reach), as a reconciler's checkout is.
  await mkdir(join(repo, ".git"));
  await write("base/kustomization.yaml", "resources: [cm.yaml]\n");
  await write("base/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-base, namespace: web}\n");
  const overlay = "resources: [../base, own.yaml]\n";
  await write("overlay/kustomization.yaml", overlay);
  await write("overlay/own.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: own, namespace: web}\n");
  const out = await mkdtemp(join(tmpdir(), "driftless-hydrate-origin-out-"));
  t.after(() => rm(out, { recursive: true, force: true }));
  const lines: string[] = [];
  const code = await onRendered(
    join(repo, "overlay"),
    { enableShell: false, failureCode: 1 },
    (line) => void lines.push(line),
    (read) => hydrate({ dir: read, format: "unstructured", output: out }, (line) => void lines.push(line)),
  );
  assert.equal(code, 0, lines.join("\n"));
  const written = new Map<string, string>();
  for (const entry of await readdir(out, { recursive: true, withFileTypes: true }))
    if (entry.isFile()) written.set(entry.name, await readFile(join(entry.parentPath, entry.name), "utf8"));
  const text = [...written.values()].join("\n");
  assert.match(text, /config\.kubernetes\.io\/origin: \|\s+path: \.\.\/base\/cm\.yaml\n/);
  assert.match(text, /config\.kubernetes\.io\/origin: \|\s+path: own\.yaml\n/);
  assert.equal(await readFile(join(repo, "overlay/kustomization.yaml"), "utf8"), overlay);
});
