import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { OciFailureReason, OciFetchError } from "./errors.ts";
import { sourceDirOf } from "./fetcher.ts";

test("spec.oci.dir must stay inside the image, also through a chain of symlinks each inside lexically", async (t) => {
  const base = await mkdtemp(join(tmpdir(), "driftless-oci-dir-"));
  t.after(() => rm(base, { recursive: true, force: true }));
  const image = join(base, "image");
  await mkdir(join(image, "config"), { recursive: true });
  await symlink(".", join(image, "here"));
  await symlink("here/..", join(image, "up")); // resolves to the image's parent folder
  const spec = (dir: string) => ({ image: "registry.example/app:v1", dir });
  assert.equal(await sourceDirOf(image, spec("config")), join(image, "config"));
  // From the image's root, as Config Sync reads it, with or without a leading slash.
  assert.equal(await sourceDirOf(image, spec("/config/")), join(image, "config"));
  assert.equal(await sourceDirOf(image, spec("/")), image);
  for (const dir of ["..", "up", "up/image/up"])
    await assert.rejects(sourceDirOf(image, spec(dir)), (error: unknown) => {
      assert.ok(error instanceof OciFetchError, String(error));
      assert.equal(error.reason, OciFailureReason.DirNotFound);
      assert.match(error.message, /leads out of the image/);
      return true;
    });
});
