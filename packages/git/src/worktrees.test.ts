import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { chmod, lstat, mkdir, readdir, readFile, readlink, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { GitFetcher } from "./fetcher.ts";
import { isSafeTreePath, removePaths } from "./link-tree.ts";
import { fixtureEnv, git, SourceRepo, tempDir } from "./testing/git-fixture.ts";
import type { GitLogger } from "./types.ts";
import { parseNameStatus } from "./worktrees.ts";

/**
 * Incremental checkouts (hard links from the previous checkout plus the changed paths) must be
 * indistinguishable from full ones, and must never change the previous checkout.
 */

const execFileAsync = promisify(execFile);
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

/** A directory outside every checkout holding one file the fetcher must never touch. */
async function victim(name: string): Promise<{ dir: string; file: string }> {
  const dir = join(root.path, name);
  await mkdir(dir);
  await writeFile(join(dir, "b.yaml"), "precious\n");
  return { dir, file: join(dir, "b.yaml") };
}

function infoLogger(logs: Record<string, unknown>[]): GitLogger {
  return { debug: () => undefined, info: (_m, fields) => logs.push({ ...fields }), warn: () => undefined };
}

void describe("incremental checkout through a symlink", () => {
  void it("checks out in full when a symlink of the previous commit became a directory, deleting nothing it pointed at", async () => {
    const outside = await victim("victim-typechange");
    const source = await SourceRepo.create(join(root.path, "repo-typechange"));
    await source.commit({ "keep.yaml": "k\n" });
    await symlink(outside.dir, join(source.work, "a"));
    await source.commit({});
    await source.push("master");
    const logs: Record<string, unknown>[] = [];
    const cacheDir = join(root.path, "cache-typechange");
    const fetcher = new GitFetcher({ cacheDir, allowFileTransport: true, logger: infoLogger(logs) });
    await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });
    await rm(join(source.work, "a"));
    await source.commit({ "a/b.yaml": "tenant\n" });
    await source.push("master");

    const second = await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });

    assert.equal(await readFile(outside.file, "utf8"), "precious\n");
    assert.equal(logs.at(-1)?.checkedOutFrom, "scratch", "a removal below the old symlink would have followed it");
    assert.equal(await readFile(join(second.dir, "a/b.yaml"), "utf8"), "tenant\n");
  });

  void it("deletes nothing through a symlink a crafted tree keeps beside a directory of the same name, from objects the cache already holds", async () => {
    const outside = await victim("victim-crafted");
    const source = await SourceRepo.create(join(root.path, "repo-crafted"));
    await source.commit({ "keep.yaml": "k\n" });
    await symlink(outside.dir, join(source.work, "a"));
    const first = await source.commit({});
    await source.push("master");
    const cacheDir = join(root.path, "cache-crafted");
    const fetcher = new GitFetcher({ cacheDir, allowFileTransport: true });
    await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });
    // `a` twice, the symlink and a tree: fsck refuses such a fetch, so write it where a cache from before fsck has it.
    const crafted = async (gitDir: string): Promise<string> => {
      const entries = (await plumbing(gitDir, ["ls-tree", first])).split("\n");
      const b = await plumbing(gitDir, ["hash-object", "-w", "--stdin"], "tenant\n");
      const sub = await plumbing(gitDir, ["mktree"], `100644 blob ${b}\tb.yaml\n`);
      const tree = await plumbing(gitDir, ["mktree"], [...entries, `040000 tree ${sub}\ta`, ""].join("\n"));
      return plumbing(gitDir, ["commit-tree", tree, "-p", first, "-m", "crafted"]);
    };
    const commit = await crafted(join(cacheDir, "s", "repo.git"));
    assert.equal(await crafted(source.bare), commit);
    await git(source.bare, "update-ref", "refs/heads/master", commit);

    const second = await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });

    assert.equal(second.commit, commit);
    assert.equal(await readFile(outside.file, "utf8"), "precious\n");
  });
});

/** A git plumbing command in a bare repository, with `input` on stdin; commits get a fixed date. */
async function plumbing(gitDir: string, args: readonly string[], input?: string): Promise<string> {
  const date = "1700000000 +0000";
  const env = { ...fixtureEnv, GIT_DIR: gitDir, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date };
  const child = execFileAsync("git", args, { env });
  child.child.stdin?.end(input);
  return (await child).stdout.trim();
}

void describe("removePaths", () => {
  void it("removes a symlink before anything below its name, so no removal follows it", async () => {
    for (let round = 0; round < 20; round++) {
      const outside = await victim(`victim-remove-${String(round)}`);
      const dir = join(root.path, `remove-${String(round)}`);
      await mkdir(dir);
      await symlink(outside.dir, join(dir, "a"));

      await removePaths(dir, ["a/b.yaml", "a"]);

      assert.equal(await readFile(outside.file, "utf8"), "precious\n", `round ${String(round)}`);
      assert.deepEqual(await readdir(dir), []);
    }
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
