import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { access, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ErrorClass, KnvCode } from "@driftless/api";
import { GitFailureReason, GitFetchError } from "./errors.ts";
import { GitFetcher } from "./fetcher.ts";
import { git, SourceRepo, tempDir } from "./testing/git-fixture.ts";
import { recordingGit } from "./testing/recording-git.ts";
import { stallingGit } from "./testing/stalling-git.ts";
import type { RecordingGit } from "./testing/recording-git.ts";

/** Fetching over file:// from real repositories with real commits. */

let root: { path: string; remove: () => Promise<void> };
let counter = 0;

before(async () => {
  root = await tempDir("fetcher");
});
after(async () => {
  await root.remove();
});

async function setup(options: { keepWorktrees?: number; branch?: string } = {}): Promise<{
  source: SourceRepo;
  fetcher: GitFetcher;
  recorder: RecordingGit;
  cacheDir: string;
}> {
  counter += 1;
  const base = join(root.path, `case-${String(counter)}`);
  const source = await SourceRepo.create(base, options.branch);
  const recorder = await recordingGit(base);
  const cacheDir = join(base, "cache");
  const fetcher = new GitFetcher({
    cacheDir,
    allowFileTransport: true,
    gitBinary: recorder.binary,
    keepWorktrees: options.keepWorktrees,
  });
  return { source, fetcher, recorder, cacheDir };
}

async function rejection(promise: Promise<unknown>): Promise<GitFetchError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof GitFetchError, `expected GitFetchError, got ${String(error)}`);
    return error;
  }
  assert.fail("expected the promise to reject");
}

void describe("GitFetcher over file://", () => {
  void it("checks out the tip of master by default into <cacheDir>/<syncKey>/worktrees/<sha>, without .git", async () => {
    const { source, fetcher, cacheDir } = await setup();
    const sha = await source.commit({ "ns.yaml": "kind: Namespace\n", "config/cm.yaml": "kind: ConfigMap\n" });
    await source.push("master");

    const result = await fetcher.fetch({ syncKey: "root-reconciler", spec: { repo: source.fileUrl } });

    assert.equal(result.commit, sha);
    assert.equal(result.dir, join(cacheDir, "root-reconciler", "worktrees", sha));
    assert.equal(result.sourceDir, result.dir);
    assert.equal(result.fetched, true);
    assert.equal(await readFile(join(result.dir, "config/cm.yaml"), "utf8"), "kind: ConfigMap\n");
    assert.deepEqual((await readdir(result.dir)).sort(), ["config", "ns.yaml"]);
  });

  void it("returns spec.git.dir inside the checkout, accepting a leading slash as Config Sync does", async () => {
    const { source, fetcher } = await setup();
    await source.commit({ "clusters/prod/ns.yaml": "a\n", "README.md": "x\n" });
    await source.push("master");

    const result = await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl, dir: "/clusters/prod/" } });

    assert.equal(result.sourceDir, join(result.dir, "clusters/prod"));
    assert.equal(await readFile(join(result.sourceDir, "ns.yaml"), "utf8"), "a\n");
  });

  void it("fails terminally with KNV2004 when spec.git.dir does not exist in the commit, naming it and listing the root", async () => {
    const { source, fetcher } = await setup();
    const sha = await source.commit({ "config/a.yaml": "a\n", "base/b.yaml": "b\n" });
    await source.push("master");

    const error = await rejection(fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl, dir: "confg" } }));

    assert.equal(error.code, KnvCode.SourceFetch);
    assert.equal(error.errorClass, ErrorClass.Terminal);
    assert.equal(error.reason, GitFailureReason.DirNotFound);
    assert.match(error.message, /spec\.git\.dir "confg" does not exist in commit/);
    assert.ok(error.message.includes(sha));
    assert.match(error.message, /base, config/);
  });

  void it("rejects a spec.git.dir that is a file, or a symlink leading out of the checkout; follows one inside it, as Config Sync", async () => {
    const { source, fetcher } = await setup();
    await source.commit({ "config/a.yaml": "a\n", "file.txt": "f\n", "envs/README.md": "x\n" });
    await symlink("config", join(source.work, "link"));
    await symlink("../config", join(source.work, "envs", "prod"));
    await symlink("/etc", join(source.work, "out"));
    await source.commit({});
    await source.push("master");

    const asFile = await rejection(fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl, dir: "file.txt" } }));
    assert.equal(asFile.reason, GitFailureReason.DirNotFound);
    assert.match(asFile.message, /is not a directory/);
    for (const dir of ["link", "envs/prod", "/link/"]) {
      const result = await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl, dir } });
      assert.equal(await readFile(join(result.sourceDir, "a.yaml"), "utf8"), "a\n", dir);
    }
    for (const dir of ["out", "out/ssh", "link/missing"]) {
      const refused = await rejection(fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl, dir } }));
      assert.equal(refused.reason, GitFailureReason.DirNotFound, dir);
    }
  });

  void it("refuses a spec.git.dir that climbs out of the repository, as an invalid spec (KNV1061)", async () => {
    const { source, fetcher } = await setup();
    const error = await rejection(
      fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl, dir: "config/../../etc" } }),
    );
    assert.equal(error.code, KnvCode.InvalidSync);
    assert.equal(error.errorClass, ErrorClass.Terminal);
  });

  void it("runs only `git ls-remote` for a poll when the remote has not moved", async () => {
    const { source, fetcher, recorder } = await setup();
    await source.commit({ "a.yaml": "a\n" });
    await source.push("master");
    const first = await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });
    await recorder.clear();

    const second = await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });

    assert.deepEqual(await recorder.subcommands(), ["ls-remote"]);
    assert.equal(second.fetched, false);
    assert.equal(second.dir, first.dir);
  });

  void it("follows new commits and leaves the previous checkout untouched", async () => {
    const { source, fetcher } = await setup();
    await source.commit({ "a.yaml": "v1\n" });
    await source.push("master");
    const first = await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });
    const sha2 = await source.commit({ "a.yaml": "v2\n", "b.yaml": "new\n" });
    await source.push("master");

    const second = await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });

    assert.equal(second.commit, sha2);
    assert.notEqual(second.dir, first.dir);
    assert.equal(await readFile(join(second.dir, "a.yaml"), "utf8"), "v2\n");
    assert.equal(await readFile(join(first.dir, "a.yaml"), "utf8"), "v1\n");
    await assert.rejects(access(join(first.dir, "b.yaml")));
  });

  void it("follows a force-push to a commit that does not descend from the synced one", async () => {
    const { source, fetcher } = await setup();
    const base = await source.commit({ "a.yaml": "base\n" });
    await source.commit({ "a.yaml": "abandoned\n" });
    await source.push("master");
    await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });
    await source.resetHard(base);
    const rewritten = await source.commit({ "a.yaml": "rewritten\n" });
    await source.push("master", { force: true });

    const result = await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });

    assert.equal(result.commit, rewritten);
    assert.equal(await readFile(join(result.dir, "a.yaml"), "utf8"), "rewritten\n");
  });

  void it("fails terminally naming the branch when it does not exist or was deleted", async () => {
    const { source, fetcher } = await setup();
    await source.commit({ "a.yaml": "a\n" });
    await source.push("master");
    await source.push("feature");
    await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl, branch: "feature" } });
    await source.deleteRemoteBranch("feature");

    const error = await rejection(fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl, branch: "feature" } }));

    assert.equal(error.code, KnvCode.SourceFetch);
    assert.equal(error.errorClass, ErrorClass.Terminal);
    assert.equal(error.reason, GitFailureReason.RefNotFound);
    assert.match(error.message, /branch "feature" not found in file:\/\//);
  });

  void it("fails terminally with KNV2004 for a spec.git.revision naming no ref, the branch notwithstanding (Config Sync's TestInvalidRootSyncRevisionStatus)", async () => {
    const { source, fetcher } = await setup();
    await source.commit({ "a.yaml": "a\n" });
    await source.push("master");

    const error = await rejection(
      fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl, branch: "master", revision: "invalid-branch" } }),
    );

    assert.equal(error.code, KnvCode.SourceFetch);
    assert.equal(error.errorClass, ErrorClass.Terminal);
    assert.match(error.message, /invalid-branch/);
  });

  void it("fetches the branch named by spec.git.branch, with revision HEAD meaning its tip", async () => {
    const { source, fetcher } = await setup({ branch: "main" });
    await source.commit({ "a.yaml": "main\n" });
    await source.push("main");
    await source.checkoutNewBranch("dev");
    const devSha = await source.commit({ "a.yaml": "dev\n" });
    await source.push("dev");

    const result = await fetcher.fetch({
      syncKey: "s",
      spec: { repo: source.fileUrl, branch: "dev", revision: "HEAD" },
    });

    assert.equal(result.commit, devSha);
  });

  void it("resolves annotated and lightweight tags in spec.git.revision to their commit, overriding the branch", async () => {
    const { source, fetcher } = await setup();
    const tagged = await source.commit({ "a.yaml": "v1\n" });
    await source.tag("v1.0.0", { annotated: true });
    await source.tag("light");
    await source.commit({ "a.yaml": "later\n" });
    await source.push("master");

    for (const revision of ["v1.0.0", "light", "refs/tags/v1.0.0"]) {
      const spec = { repo: source.fileUrl, branch: "master", revision };
      const remote = await fetcher.resolveRemote({ spec });
      assert.equal(remote.commit, tagged, revision);
      const result = await fetcher.fetch({ syncKey: "s", spec });
      assert.equal(result.commit, tagged, revision);
      assert.equal(await readFile(join(result.dir, "a.yaml"), "utf8"), "v1\n");
    }
  });

  void it("resolves short names in git's order, as git-sync's fetch does, and a branch naming an annotated tag to the same commit at every poll", async () => {
    const { source, fetcher } = await setup();
    const tagged = await source.commit({ "a.yaml": "tagged\n" });
    await source.tag("release", { annotated: true });
    const review = await source.commit({ "a.yaml": "review\n" });
    // A code review's ref, as a forge keeps one outside refs/heads and refs/tags.
    await git(source.work, "push", "--quiet", source.bare, "HEAD:refs/pull/7/head");
    await source.commit({ "a.yaml": "master\n" });
    await source.push("master");

    for (const [spec, commit] of [
      [{ revision: "pull/7/head" }, review],
      [{ revision: "tags/release" }, tagged],
      [{ branch: "refs/tags/release" }, tagged],
      [{ branch: "release" }, tagged],
    ] as const) {
      const full = { repo: source.fileUrl, ...spec };
      for (const poll of [1, 2]) {
        const result = await fetcher.fetch({ syncKey: "s", spec: full });
        assert.equal(result.commit, commit, `${JSON.stringify(spec)}, poll ${String(poll)}`);
      }
    }
  });

  void it("fetches a commit SHA that is not at any branch tip, directly", async () => {
    const { source, fetcher, recorder } = await setup();
    const old = await source.commit({ "a.yaml": "old\n" });
    await source.commit({ "a.yaml": "new\n" });
    await source.push("master");

    const result = await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl, revision: old } });

    assert.equal(result.commit, old);
    assert.equal(await readFile(join(result.dir, "a.yaml"), "utf8"), "old\n");
    const fetches = (await recorder.calls()).filter((args) => args.includes("fetch"));
    assert.equal(fetches.length, 1, "one shallow fetch by SHA, no fallback");
    assert.ok(fetches[0]?.includes("--depth=1"));
    assert.deepEqual(await fetcher.resolveRemote({ spec: { repo: source.fileUrl, revision: old.toUpperCase() } }), {
      commit: old,
      ref: undefined,
    });
  });

  void it("fails terminally for a commit SHA the repository does not have", async () => {
    const { source, fetcher } = await setup();
    await source.commit({ "a.yaml": "a\n" });
    await source.push("master");
    const missing = "0123456789abcdef0123456789abcdef01234567";

    const error = await rejection(fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl, revision: missing } }));

    assert.equal(error.reason, GitFailureReason.RevisionNotFound);
    assert.equal(error.errorClass, ErrorClass.Terminal);
    assert.ok(error.message.includes(missing));
  });

  void it("explains that an abbreviated SHA is not accepted", async () => {
    const { source, fetcher } = await setup();
    const sha = await source.commit({ "a.yaml": "a\n" });
    await source.push("master");

    const error = await rejection(
      fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl, revision: sha.slice(0, 8) } }),
    );

    assert.equal(error.reason, GitFailureReason.RefNotFound);
    assert.match(error.message, /full 40-character SHA/);
  });

  void it("keeps the most recently used checkouts and deletes older ones", async () => {
    const { source, fetcher, cacheDir } = await setup({ keepWorktrees: 2 });
    const shas: string[] = [];
    for (const n of [1, 2, 3, 4]) {
      shas.push(await source.commit({ "a.yaml": `v${String(n)}\n` }));
      await source.push("master");
      await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });
    }
    const remaining = (await readdir(join(cacheDir, "s", "worktrees"))).sort();
    assert.deepEqual(remaining, [shas[2], shas[3]].sort());
  });

  void it("removes leftovers of an interrupted checkout", async () => {
    const { source, fetcher, cacheDir } = await setup();
    await source.commit({ "a.yaml": "a\n" });
    await source.push("master");
    await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });
    const leftover = join(cacheDir, "s", "worktrees", ".tmp-deadbeef-1");
    await writeFile(leftover, "partial");
    await source.commit({ "a.yaml": "b\n" });
    await source.push("master");

    await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });

    await assert.rejects(stat(leftover));
  });

  void it("serialises concurrent fetches of one sync; all of them succeed with the same commit", async () => {
    const { source, fetcher } = await setup();
    const sha = await source.commit({ "a.yaml": "a\n", "b/c.yaml": "c\n" });
    await source.push("master");

    const results = await Promise.all(
      Array.from({ length: 6 }, () => fetcher.fetch({ syncKey: "same", spec: { repo: source.fileUrl } })),
    );

    assert.deepEqual(new Set(results.map((result) => result.commit)), new Set([sha]));
    assert.equal(results.filter((result) => result.fetched).length, 1, "only the first one fetched");
  });

  void it("refuses file:// and local paths unless allowFileTransport is set", async () => {
    const { source } = await setup();
    const strict = new GitFetcher({ cacheDir: join(root.path, "strict-cache") });
    for (const repo of [source.fileUrl, source.bare]) {
      const error = await rejection(strict.fetch({ syncKey: "s", spec: { repo } }));
      assert.equal(error.reason, GitFailureReason.InvalidSpec);
      assert.match(error.message, /file transport is not allowed/);
    }
  });

  void it("reports a repository that does not exist as terminal", async () => {
    const { fetcher } = await setup();
    const error = await rejection(
      fetcher.fetch({ syncKey: "s", spec: { repo: `file://${join(root.path, "nope.git")}` } }),
    );
    assert.equal(error.reason, GitFailureReason.RepoNotFound);
    assert.equal(error.errorClass, ErrorClass.Terminal);
  });

  void it("deletes and re-creates a damaged cache repository instead of failing every poll", async () => {
    const { source, fetcher, cacheDir } = await setup();
    await source.commit({ "a.yaml": "a\n" });
    await source.push("master");
    await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });
    // Lose every object but keep the refs that claim them.
    await rm(join(cacheDir, "s", "repo.git", "objects"), { recursive: true });
    await git(join(cacheDir, "s", "repo.git"), "init", "--quiet", "--bare");
    const sha = await source.commit({ "a.yaml": "b\n" });
    await source.push("master");

    const result = await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });

    assert.equal(result.commit, sha);
    assert.equal(await readFile(join(result.dir, "a.yaml"), "utf8"), "b\n");
  });

  void it("stops with a retryable Aborted error when the caller's signal fires", async () => {
    const { source, fetcher } = await setup();
    await source.commit({ "a.yaml": "a\n" });
    await source.push("master");
    const error = await rejection(
      fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl }, signal: AbortSignal.abort() }),
    );
    assert.equal(error.reason, GitFailureReason.Aborted);
    assert.equal(error.errorClass, ErrorClass.Retry);
  });

  void it("resolveRemote answers with one ls-remote and writes nothing for the sync", async () => {
    const { source, fetcher, recorder, cacheDir } = await setup();
    const sha = await source.commit({ "a.yaml": "a\n" });
    await source.push("master");

    const remote = await fetcher.resolveRemote({ spec: { repo: source.fileUrl } });

    assert.deepEqual(remote, { commit: sha, ref: "refs/heads/master" });
    assert.deepEqual(await recorder.subcommands(), ["ls-remote"]);
    assert.deepEqual(await readdir(cacheDir), []);
  });

  void it("remove() deletes a sync's cache; every syncKey maps to one directory inside cacheDir", async () => {
    const { source, fetcher, cacheDir } = await setup();
    await source.commit({ "a.yaml": "a\n" });
    await source.push("master");
    await fetcher.fetch({ syncKey: "gone", spec: { repo: source.fileUrl } });
    await fetcher.remove("gone");
    await assert.rejects(stat(join(cacheDir, "gone")));
    for (const key of ["../escape", "..", "a/b", "x".repeat(300), "sync.rootsync.ns.name"]) {
      const dir = fetcher.syncDir(key);
      assert.equal(join(dir, ".."), cacheDir, key);
      assert.ok(basename(dir).length <= 120, key);
    }
    assert.notEqual(fetcher.syncDir("a/b"), fetcher.syncDir("a_b"));
    assert.equal(fetcher.syncDir("sync.rootsync.ns.name"), join(cacheDir, "sync.rootsync.ns.name"));
  });
});

/** Polls a condition until it holds or the deadline passes: a wait on state, not on time. */
async function eventually(probe: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Paths under a cache repository that a killed git leaves behind: locks and half-written packs. */
async function leftoversIn(gitDir: string): Promise<string[]> {
  const entries = await readdir(gitDir, { recursive: true });
  return entries.filter((path) => path.endsWith(".lock") || /(^|\/)(tmp_|\.tmp-)/.test(path)).sort();
}

void describe("GitFetcher after a git was killed, and the cache's size", () => {
  void it("fetches the next commit after a fetch was killed mid-transfer, removing the shallow.lock it left", async () => {
    const { source, cacheDir } = await setup();
    const stalling = await stallingGit(join(cacheDir, ".."));
    const fetcher = new GitFetcher({
      cacheDir,
      allowFileTransport: true,
      gitBinary: stalling.binary,
      timeoutMs: 60_000,
    });
    const gitDir = join(cacheDir, "s", "repo.git");
    await source.commit({ "a.yaml": "v1\n" });
    await source.push("master");
    await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });
    await source.commit({ "a.yaml": "v2\n", "big.bin": randomBytes(3 * 1024 * 1024).toString("base64") });
    await source.push("master");
    await writeFile(stalling.stallFile, "");
    const abort = new AbortController();

    const fetching = fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl }, signal: abort.signal });
    let ended: string | undefined;
    fetching.then(
      () => (ended = "it succeeded"),
      (error: unknown) => (ended = String(error)),
    );
    const killed = rejection(fetching);
    const lockHeld = (): Promise<boolean> =>
      access(join(gitDir, "shallow.lock")).then(
        () => true,
        () => false,
      );
    // A fetch that ends before it stalls would leave the wait to time out saying nothing: say how it ended.
    await eventually(async () => {
      if (ended !== undefined) throw new Error(`the fetch ended before it stalled: ${ended}`);
      return lockHeld();
    }, "the fetch to take shallow.lock");
    abort.abort();
    assert.equal((await killed).reason, GitFailureReason.Aborted);
    assert.ok(await lockHeld(), "the killed git left its lock");
    await rm(stalling.stallFile);
    const sha = await source.commit({ "a.yaml": "v3\n" });
    await source.push("master");

    const result = await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });

    assert.equal(result.commit, sha);
    assert.equal(await readFile(join(result.dir, "a.yaml"), "utf8"), "v3\n");
    assert.deepEqual(await leftoversIn(gitDir), []);
  });

  void it("moves the target past a ref lock and other leftovers of an OOM-killed git, instead of failing once and then staying on the old commit", async () => {
    const { source, fetcher, cacheDir } = await setup();
    const gitDir = join(cacheDir, "s", "repo.git");
    await source.commit({ "a.yaml": "v1\n" });
    await source.push("master");
    await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });
    for (const leftover of [
      "refs/driftless/target.lock",
      "packed-refs.lock",
      "config.lock",
      "objects/pack/tmp_pack_Xb3kQ1",
      "objects/pack/.tmp-4242-pack-0123.pack",
    ]) {
      await writeFile(join(gitDir, leftover), "");
    }
    const sha = await source.commit({ "a.yaml": "v2\n" });
    await source.push("master");

    const result = await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });
    const again = await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });

    assert.equal(result.commit, sha);
    assert.equal(again.commit, sha);
    assert.equal(await git(gitDir, "rev-parse", "refs/driftless/target"), sha);
    assert.deepEqual(await leftoversIn(gitDir), []);
  });

  void it("points the target at a commit found in the cache without fetching, so gc keeps it", async () => {
    const { source, fetcher, cacheDir } = await setup({ keepWorktrees: 1 });
    const gitDir = join(cacheDir, "s", "repo.git");
    const onMaster = await source.commit({ "a.yaml": "master\n" });
    await source.push("master");
    await source.checkoutNewBranch("other");
    const onOther = await source.commit({ "a.yaml": "other\n" });
    await source.push("other");
    await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });
    await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl, branch: "other" } });
    assert.equal(await git(gitDir, "rev-parse", "refs/driftless/target"), onOther);

    // Back to master: its checkout was collected (keepWorktrees 1), its commit is still in the cache.
    const back = await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });

    assert.equal(back.commit, onMaster);
    assert.equal(back.fetched, false);
    assert.equal(await git(gitDir, "rev-parse", "refs/driftless/target"), onMaster);
  });

  void it("prunes the objects of commits it no longer syncs at each auto gc, so the cache does not grow with the commit rate", async () => {
    const { source, fetcher, cacheDir } = await setup();
    const gitDir = join(cacheDir, "s", "repo.git");
    const files = (round: number): Record<string, string> =>
      Object.fromEntries(
        ["a", "b", "c", "d", "e"].map((name) => [`config/${name}.yaml`, `${name}: ${String(round)}\n`]),
      );
    await source.commit(files(0));
    await source.push("master");
    await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });
    // Test-only: make `git gc --auto` run every few fetches (each fetch keeps its pack; more than 2 packs
    // trigger gc) instead of after thousands of objects. Pruning is the fetcher's own setting.
    await git(gitDir, "config", "fetch.unpackLimit", "1");
    await git(gitDir, "config", "gc.autoPackLimit", "2");

    for (let round = 1; round <= 12; round += 1) {
      await source.commit(files(round));
      await source.push("master");
      const result = await fetcher.fetch({ syncKey: "s", spec: { repo: source.fileUrl } });
      assert.equal(await readFile(join(result.dir, "config/a.yaml"), "utf8"), `a: ${String(round)}\n`);
    }

    // A commit is 7 objects (commit, 2 trees, 5 blobs); at most the 3 packs before a gc hold unreachable ones.
    const unreachable = (await git(gitDir, "fsck", "--unreachable", "--no-reflogs", "--no-progress"))
      .split("\n")
      .filter((line) => line.startsWith("unreachable"));
    assert.ok(unreachable.length <= 3 * 7, `${String(unreachable.length)} unreachable objects`);
    const loose = /^count: (\d+)$/m.exec(await git(gitDir, "count-objects", "-v"))?.[1];
    assert.equal(loose, "0", "no unreachable objects loosened to wait out gc's two weeks");
    const shallow = (await readFile(join(gitDir, "shallow"), "utf8")).trim().split("\n");
    assert.ok(shallow.length <= 3, `${String(shallow.length)} shallow commits`);
  });
});
