import assert from "node:assert/strict";
import { chmod, chown, lstat, mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ensurePrivateDir, ensurePrivateDirSync, UnsafeStateDirError } from "./private-dir.ts";

/** nobody: stands for another local user (the tests run as root, which may chown). */
const otherUid = 65534;
const asRoot = process.getuid?.() === 0;

let root: string;
before(async () => {
  root = await mkdtemp(join(tmpdir(), "driftless-private-dir-"));
});
after(() => rm(root, { recursive: true, force: true }));

/** A folder another user made first, open to everyone, as in a shared /tmp. */
async function squatted(name: string): Promise<string> {
  const path = join(root, name);
  await mkdir(path);
  await chown(path, otherUid, otherUid);
  await chmod(path, 0o777);
  return path;
}

void describe("ensurePrivateDir", () => {
  void it("creates a missing folder, and its parents, with mode 0700", async () => {
    const path = join(root, "new", "state");
    await ensurePrivateDir(path);
    assert.equal((await lstat(path)).mode & 0o777, 0o700);
  });

  void it("accepts a folder of our own that others may read but not write", async () => {
    const path = join(root, "readable");
    await mkdir(path, { mode: 0o755 });
    await chmod(path, 0o755);
    await ensurePrivateDir(path);
    ensurePrivateDirSync(path);
  });

  void it("refuses a folder another user made first, naming it and the fix", { skip: !asRoot }, async () => {
    const path = await squatted("squatted");
    for (const ensure of [ensurePrivateDir, (p: string) => Promise.resolve().then(() => ensurePrivateDirSync(p))])
      await assert.rejects(
        ensure(path),
        (error: unknown) =>
          error instanceof UnsafeStateDirError &&
          error.code === "KNV2003" &&
          error.message.includes(`${path} is owned by uid ${otherUid}`) &&
          error.message.includes("--state-dir"),
      );
  });

  void it("refuses a symlink, even to a folder of our own", async () => {
    const target = join(root, "target");
    await mkdir(target, { mode: 0o700 });
    const link = join(root, "link");
    await symlink(target, link);
    await assert.rejects(ensurePrivateDir(link), /link is a symbolic link/);
    await symlink(join(root, "nowhere"), join(root, "dangling"));
    await assert.rejects(ensurePrivateDir(join(root, "dangling")), /dangling is a symbolic link/);
  });

  void it("refuses a folder of our own that its group or others may write", async () => {
    const path = join(root, "group-writable");
    await mkdir(path);
    await chmod(path, 0o770);
    assert.throws(() => ensurePrivateDirSync(path), /can be written by its group or others \(mode 0770\)/);
  });
});
