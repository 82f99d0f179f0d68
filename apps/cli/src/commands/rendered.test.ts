import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { it } from "node:test";
import { onRendered } from "./rendered.ts";

async function kustomizationOnlyBelow(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "driftless-rendered-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const write = async (path: string, text: string): Promise<void> => {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  };
  await write("sub/kustomization.yaml", "resources: [cm.yaml]\n");
  await write("sub/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: web}\n");
  return dir;
}

void it("diff refuses a directory whose kustomizations are only below it with KNV1068, as a reconciler does", async (t) => {
  const dir = await kustomizationOnlyBelow(t);
  const lines: string[] = [];
  let ran = false;
  const code = await onRendered(
    dir,
    { enableShell: false, failureCode: 2, refuseKustomizationBelow: true },
    (line) => void lines.push(line),
    () => {
      ran = true;
      return Promise.resolve(0);
    },
  );
  assert.equal(code, 2);
  assert.equal(ran, false);
  assert.match(
    lines.join("\n"),
    /^KNV1068: Kustomization config file is missing from the sync directory .*sub\/kustomization\.yaml/,
  );
});

void it("vet and hydrate read a directory whose kustomizations are only below it as manifests, as nomos does", async (t) => {
  const dir = await kustomizationOnlyBelow(t);
  let read: string | undefined;
  const code = await onRendered(
    dir,
    { enableShell: false, failureCode: 1 },
    () => undefined,
    (d) => {
      read = d;
      return Promise.resolve(0);
    },
  );
  assert.equal(code, 0);
  assert.equal(read, dir);
});

void it("vet and hydrate refuse a kustomization read as a hierarchy as cobra prints nomos's refusal: `Error: ` and its words", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "driftless-rendered-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, "kustomization.yaml"), "resources: []\n");
  const lines: string[] = [];
  let ran = false;
  const code = await onRendered(
    dir,
    { enableShell: false, failureCode: 1, hierarchy: true },
    (line) => void lines.push(line),
    () => {
      ran = true;
      return Promise.resolve(0);
    },
  );
  assert.equal(code, 1);
  assert.equal(ran, false);
  assert.deepEqual(lines, ["Error: source-format must be unstructured when Kustomization is needed"]);
});
