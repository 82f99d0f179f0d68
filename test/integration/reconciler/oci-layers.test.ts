/**
 * Layer forms Config Sync's oci-sync reads through go-containerregistry's Extract, pushed to a real registry and
 * pulled by the reconciler's fetcher: the tree a sync reads must be the one oci-sync writes (checked against it,
 * 2026-11-29, ggcr v0.20.6).
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OciFetcher, type OciFetchResult } from "@driftless/oci";
import { tarGz } from "@driftless/oci/testing";
import { pushImage, startRegistry, type Registry } from "../../support/registry.ts";

async function pull(t: TestContext, registry: Registry, image: string): Promise<OciFetchResult> {
  const cacheDir = await mkdtemp(join(tmpdir(), "driftless-oci-layers-"));
  t.after(() => rm(cacheDir, { recursive: true, force: true }));
  return new OciFetcher({ cacheDir }).fetch({
    spec: { image },
    credentials: { username: registry.username, password: registry.password },
    caCert: registry.caCert,
  });
}

test("a whiteout whose path runs through a file, a symlink or nothing hides nothing: the lower layer's file stays, as oci-sync keeps it", async (t) => {
  const registry = await startRegistry(t);
  const lower = tarGz([
    { name: "keep.yaml", content: "keep: 1\n" },
    { name: "sub/", type: "directory" },
    { name: "sub/a.yaml", content: "a: 1\n" },
    { name: "link", type: "symlink", linkname: "sub" },
  ]);
  const upper = tarGz([{ name: "keep.yaml/.wh.x" }, { name: "none/.wh.y" }, { name: "link/.wh.a.yaml" }]);
  await pushImage(registry, "tenant/whiteouts", "v1", [lower, upper]);
  const { dir } = await pull(t, registry, `${registry.host}/tenant/whiteouts:v1`);
  assert.equal(await readFile(join(dir, "keep.yaml"), "utf8"), "keep: 1\n");
  assert.equal(await readFile(join(dir, "sub/a.yaml"), "utf8"), "a: 1\n");
  assert.deepEqual((await readdir(dir)).sort(), ["keep.yaml", "link", "sub"]);
});

test("a path whose .. stays inside the image is read as Go's filepath.Clean reads it (a/../b.yaml is b.yaml), not refused", async (t) => {
  const registry = await startRegistry(t);
  const layer = tarGz([
    { name: "a/", type: "directory" },
    { name: "a/../b.yaml", content: "b: 1\n" },
  ]);
  await pushImage(registry, "tenant/cleaned", "v1", [layer]);
  const { dir } = await pull(t, registry, `${registry.host}/tenant/cleaned:v1`);
  assert.equal(await readFile(join(dir, "b.yaml"), "utf8"), "b: 1\n");
});
