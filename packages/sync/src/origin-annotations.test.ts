import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { lstat, mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildDirectory } from "./origin-annotations.ts";

async function checkout(t: TestContext, files: Record<string, string>): Promise<{ root: string; scratch: string }> {
  const base = await realpath(await mkdtemp(join(tmpdir(), "driftless-mirror-")));
  t.after(() => rm(base, { recursive: true, force: true }));
  const root = join(base, "repo");
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(root, path, ".."), { recursive: true });
    await writeFile(join(root, path), content);
  }
  await mkdir(join(base, "scratch"));
  return { root, scratch: join(base, "scratch") };
}

const kind = async (path: string): Promise<string> => {
  const s = await lstat(path);
  return s.isSymbolicLink() ? "link" : s.isDirectory() ? "dir" : "file";
};

test("without writes, only the sync directory's chain is real and its kustomization is the edited one", async (t) => {
  const { root, scratch } = await checkout(t, {
    "overlay/kustomization.yaml": "resources: [../base]\n",
    "base/kustomization.yaml": "resources: [cm.yaml]\n",
  });
  const build = await buildDirectory(join(root, "overlay"), root, scratch, []);
  assert.equal(build.dir, join(scratch, "checkout-mirror", "overlay"));
  assert.equal(await kind(build.dir), "dir");
  assert.equal(await kind(join(scratch, "checkout-mirror", "base")), "link");
  assert.match(
    await readFile(join(build.dir, "kustomization.yaml"), "utf8"),
    /buildMetadata:\n {2}- originAnnotations/,
  );
});

test("a kustomization asking for origins itself, with nothing written, is built in place", async (t) => {
  const { root, scratch } = await checkout(t, { "kustomization.yaml": "buildMetadata: [originAnnotations]\n" });
  const build = await buildDirectory(root, root, scratch, []);
  assert.equal(build.dir, root);
  assert.equal(build.mirrorRoot, undefined);
});

test("with a chart home to write, every kustomization and the chart home are real directories of the mirror; a symlink into the repository leads to the mirror", async (t) => {
  const { root, scratch } = await checkout(t, {
    "overlay/kustomization.yaml": "resources: [../base]\nbuildMetadata: [originAnnotations]\n",
    "base/kustomization.yaml": "helmCharts: []\n",
    "app/kustomization.yaml": "helmCharts: []\n",
    "app/charts/local/Chart.yaml": "name: local\n",
    "other/file.yaml": "{}\n",
  });
  await symlink("../base", join(root, "overlay", "base"));
  const build = await buildDirectory(join(root, "overlay"), root, scratch, [
    join(root, "base", "charts", "hello-0.1.0"),
    join(root, "app", "charts"),
  ]);
  const mirror = join(scratch, "checkout-mirror");
  assert.equal(build.rootOf(join(root, "base")), join(mirror, "base"));
  for (const dir of ["overlay", "base", "app", "base/charts/hello-0.1.0", "app/charts"])
    assert.equal(await kind(join(mirror, dir)), "dir", dir);
  for (const link of ["other", "base/kustomization.yaml", "app/charts/local"])
    assert.equal(await kind(join(mirror, link)), "link", link);
  assert.equal(await realpath(join(mirror, "overlay", "base")), join(mirror, "base"));
  assert.equal(await realpath(join(mirror, "app", "charts", "local")), join(root, "app", "charts", "local"));
});
