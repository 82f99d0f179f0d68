import assert from "node:assert/strict";
import { chmod, lstat, readdir, readFile, readlink, rm, symlink } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { GitFetcher } from "./fetcher.ts";
import { isSafeTreePath } from "./link-tree.ts";
import { SourceRepo, tempDir } from "./testing/git-fixture.ts";
import type { GitLogger } from "./types.ts";
import { parseNameStatus } from "./worktrees.ts";

/**
 * Incremental checkouts (hard links from the previous checkout plus the changed paths) must be
 * indistinguishable from full ones, and must never change the previous checkout.
 */

let root: { path: string; remove: () => Promise<void> };
before(async () => {
  root = await tempDir("worktrees");
});
after(async () => {
  await root.remove();
});

type Entry = { type: "file"; mode: number; content: string } | { type: "link"; target: string } | { type: "dir" };

/** Everything observable about a checkout: paths, types, modes, contents, link targets. */
async function snapshot(dir: string): Promise<Record<string, Entry>> {
  const result: Record<string, Entry> = {};
  for (const relative of await readdir(dir, { recursive: true })) {
    const path = join(dir, relative);
    const info = await lstat(path);
    if (info.isSymbolicLink()) result[relative] = { type: "link", target: await readlink(path) };
    else if (info.isDirectory()) result[relative] = { type: "dir" };
    else result[relative] = { type: "file", mode: info.mode & 0o777, content: await readFile(path, "utf8") };
  }
  return result;
}

void describe("incremental checkout", () => {
  void it("produces exactly what a full checkout does, sharing unchanged files and leaving the old checkout intact", async () => {
    const source = await SourceRepo.create(join(root.path, "repo"));
    await source.commit({
      "a.yaml": "a1\n",
      "tool.sh": "#!/bin/sh\n",
      "dir/x.yaml": "x\n",
      f: "file that becomes a directory\n",
      "e/inner.yaml": "directory that becomes a file\n",
      "same/unchanged.yaml": "u\n",
    });
    await symlink("a.yaml", join(source.work, "link"));
    await source.commit({});
    await source.push("master");
    const logs: Record<string, unknown>[] = [];
    const logger: GitLogger = {
      debug: () => undefined,
      info: (_m, fields) => logs.push({ ...fields }),
      warn: () => undefined,
    };
    const fetcher = new GitFetcher({ cacheDir: join(root.path, "cache"), allowFileTransport: true, logger });
    const first = await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });
    const before = await snapshot(first.dir);

    await chmod(join(source.work, "tool.sh"), 0o755);
    await rm(join(source.work, "link"));
    await symlink("same/unchanged.yaml", join(source.work, "link"));
    await source.commit({
      "a.yaml": "a2\n",
      "dir/x.yaml": null,
      f: null,
      e: null,
    });
    await source.commit({ "f/g.yaml": "now a directory\n", e: "now a file\n", "new/n.yaml": "n\n" });
    await source.push("master");
    const second = await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });

    assert.equal(logs.at(-1)?.checkedOutFrom, first.commit, "the second checkout was incremental");
    const full = await new GitFetcher({ cacheDir: join(root.path, "cache-full"), allowFileTransport: true }).fetch({
      syncKey: "s",
      spec: { repo: source.fileUrl },
    });
    assert.deepEqual(await snapshot(second.dir), await snapshot(full.dir));
    assert.deepEqual(await snapshot(first.dir), before, "the older checkout changed");
    assert.deepEqual((await snapshot(second.dir))["tool.sh"], { type: "file", mode: 0o755, content: "#!/bin/sh\n" });
    const unchanged = "same/unchanged.yaml";
    assert.equal(
      (await lstat(join(second.dir, unchanged))).ino,
      (await lstat(join(first.dir, unchanged))).ino,
      "unchanged files are shared",
    );
  });

  void it("falls back to a full checkout when the previous commit's objects are gone", async () => {
    const source = await SourceRepo.create(join(root.path, "repo2"));
    await source.commit({ "a.yaml": "1\n", "b.yaml": "b\n" });
    await source.push("master");
    const cacheDir = join(root.path, "cache2");
    const fetcher = new GitFetcher({ cacheDir, allowFileTransport: true });
    await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });
    await rm(join(cacheDir, "s", "repo.git"), { recursive: true });
    await source.commit({ "a.yaml": "2\n" });
    await source.push("master");

    const result = await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });

    assert.deepEqual(await snapshot(result.dir), {
      "a.yaml": { type: "file", mode: 0o644, content: "2\n" },
      "b.yaml": { type: "file", mode: 0o644, content: "b\n" },
    });
  });
});

void describe("parseNameStatus", () => {
  void it("reads NUL-separated status and path pairs", () => {
    assert.deepEqual(parseNameStatus("M\0a b.yaml\0D\0dir/x\0A\0new\0T\0link\0"), [
      { status: "M", path: "a b.yaml" },
      { status: "D", path: "dir/x" },
      { status: "A", path: "new" },
      { status: "T", path: "link" },
    ]);
    assert.deepEqual(parseNameStatus(""), []);
  });

  void it("gives up on paths a hostile tree could hold, so the full checkout (which git validates) runs", () => {
    assert.equal(parseNameStatus("A\0../escape\0"), undefined);
    assert.equal(parseNameStatus("A\0.git/config\0"), undefined);
    assert.equal(parseNameStatus("A\0sub/.GIT/hooks/x\0"), undefined);
    assert.equal(parseNameStatus("R100\0a\0"), undefined);
  });

  void it("isSafeTreePath accepts ordinary nested paths only", () => {
    assert.ok(isSafeTreePath("clusters/prod/ns.yaml"));
    for (const bad of ["", "/abs", "a//b", "a/./b", "a/../b", "..", "a\\b"]) assert.ok(!isSafeTreePath(bad), bad);
  });
});
