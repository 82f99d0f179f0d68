import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { chmod, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { ErrorClass, KnvCode } from "@driftless/api";
import { GitFailureReason, GitFetchError } from "./errors.ts";
import { GitFetcher } from "./fetcher.ts";
import { fixtureEnv, tempDir } from "./testing/git-fixture.ts";
import { startGitHttpServer } from "./testing/git-http-server.ts";
import type { GitHttpServer } from "./testing/git-http-server.ts";

/**
 * Repositories a hostile server crafts with plumbing (trees git itself would never write), served by real
 * `git http-backend` on loopback: nothing they hold may run code or write outside the sync's checkout.
 */

const execFileAsync = promisify(execFile);
let root: { path: string; remove: () => Promise<void> };
let server: GitHttpServer;
let counter = 0;

before(async () => {
  root = await tempDir("hostile");
  await mkdir(join(root.path, "srv"));
  server = await startGitHttpServer({ projectRoot: join(root.path, "srv") });
});
after(async () => {
  await server.close();
  await root.remove();
});

// Commits written into two repositories must be the same objects, whatever second it is.
const fixedDates = { GIT_AUTHOR_DATE: "1700000000 +0000", GIT_COMMITTER_DATE: "1700000000 +0000" };

/** Writes objects into a bare repository with plumbing; `tree` takes mktree lines, duplicates included. */
class Objects {
  readonly gitDir: string;

  constructor(gitDir: string) {
    this.gitDir = gitDir;
  }

  async #git(args: readonly string[], input?: string): Promise<string> {
    const child = execFileAsync("git", args, { env: { ...fixtureEnv, ...fixedDates, GIT_DIR: this.gitDir } });
    child.child.stdin?.end(input);
    return (await child).stdout.trim();
  }

  blob(text: string): Promise<string> {
    return this.#git(["hash-object", "-w", "--stdin"], text);
  }

  tree(lines: readonly string[]): Promise<string> {
    return this.#git(["mktree"], lines.map((line) => `${line}\n`).join(""));
  }

  commit(tree: string, parent?: string): Promise<string> {
    return this.#git(["commit-tree", tree, "-m", "crafted", ...(parent === undefined ? [] : ["-p", parent])]);
  }

  /** A commit object exactly as given, which `commit-tree` would refuse to write. */
  literalCommit(text: string): Promise<string> {
    return this.#git(["hash-object", "-t", "commit", "-w", "--literally", "--stdin"], text);
  }

  setBranch(sha: string): Promise<string> {
    return this.#git(["update-ref", "refs/heads/master", sha]);
  }
}

/** A bare repository under the server's root, as `<name>.git`. */
async function served(name: string): Promise<{ objects: Objects; url: string }> {
  const gitDir = join(root.path, "srv", `${name}.git`);
  await execFileAsync("git", ["init", "--quiet", "--bare", gitDir], { env: fixtureEnv });
  return { objects: new Objects(gitDir), url: server.url(`${name}.git`) };
}

function fetcherIn(cacheDir: string): GitFetcher {
  return new GitFetcher({ cacheDir });
}

/**
 * The red-team superproject: its tree lists `m` twice, as a gitlink to a submodule whose tree is one symlink
 * `n -> linkTarget`, and as a tree with a gitlink at `m/n/<payloadDir>`. Checked out naively, the first submodule
 * makes the symlink and the second is written through it. Every object is written to each of `also` as well
 * (a cache that got them before fetches were fsck'd). Returns the superproject's URL and commit.
 */
async function symlinkSubmodules(
  linkTarget: string,
  payloadDir: string,
  payload: { readonly name: string; readonly mode: string; readonly content: string },
  also: readonly Objects[] = [],
): Promise<{ url: string; commit: string }> {
  counter += 1;
  const id = String(counter);
  const pay = await served(`payload-${id}`);
  const sub = await served(`m-${id}`);
  const top = await served(`super-${id}`);
  const write = async (home: Objects, all: (o: Objects) => Promise<string>): Promise<string> => {
    const sha = await all(home);
    for (const other of also) assert.equal(await all(other), sha);
    return sha;
  };
  const payCommit = await write(pay.objects, async (o) =>
    o.commit(await o.tree([`${payload.mode} blob ${await o.blob(payload.content)}\t${payload.name}`])),
  );
  await pay.objects.setBranch(payCommit);
  const mCommit = await write(sub.objects, async (o) =>
    o.commit(await o.tree([`120000 blob ${await o.blob(linkTarget)}\tn`])),
  );
  await sub.objects.setBranch(mCommit);
  const gitmodules = [
    `[submodule "m"]\n\tpath = m\n\turl = ../m-${id}.git\n`,
    `[submodule "p"]\n\tpath = m/n/${payloadDir}\n\turl = ../payload-${id}.git\n`,
  ].join("");
  const commit = await write(top.objects, async (o) => {
    const n = await o.tree([`160000 commit ${payCommit}\t${payloadDir}`]);
    const m = await o.tree([`040000 tree ${n}\tn`]);
    return o.commit(
      await o.tree([
        `100644 blob ${await o.blob(gitmodules)}\t.gitmodules`,
        `100644 blob ${await o.blob("apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n")}\tns.yaml`,
        `160000 commit ${mCommit}\tm`,
        `040000 tree ${m}\tm`,
      ]),
    );
  });
  await top.objects.setBranch(commit);
  return { url: top.url, commit };
}

/** A hook that leaves `marker` behind if it ever runs. */
function hookWriting(marker: string): { name: string; mode: string; content: string } {
  return { name: "reference-transaction", mode: "100755", content: `#!/bin/sh\necho ran >> ${marker}\n` };
}

function isUnsafeContent(pattern: RegExp): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof GitFetchError, String(error));
    assert.equal(error.reason, GitFailureReason.UnsafeContent, error.message);
    assert.equal(error.errorClass, ErrorClass.Terminal);
    assert.equal(error.code, KnvCode.SourceFetch);
    assert.match(error.message, pattern);
    return true;
  };
}

void describe("a hostile git server", () => {
  void it("cannot plant a hook in the cache repository through a symlink one submodule writes and another is checked out through: fsck refuses the tree, terminally", async () => {
    const cacheDir = join(root.path, "cache-fsck");
    const marker = join(root.path, "hook-ran-fsck");
    // Relative: from <sync>/worktrees/<tmp>/m to <sync>/repo.git, the cache repository.
    const { url } = await symlinkSubmodules("../../../repo.git", "hooks", hookWriting(marker));
    const fetcher = fetcherIn(cacheDir);

    for (let attempt = 0; attempt < 2; attempt++) {
      await assert.rejects(
        fetcher.fetch({ syncKey: "s", spec: { repo: url } }),
        isUnsafeContent(/fsck.*duplicateEntries/),
      );
    }
    assert.ok(!existsSync(marker), "the hook ran");
    assert.ok(!existsSync(join(cacheDir, "s", "repo.git", "hooks", "reference-transaction")));
  });

  void it("cannot write a submodule into a directory outside the checkout through a symlink: fsck refuses the tree", async () => {
    const outside = join(root.path, "outside");
    await mkdir(join(outside, "x"), { recursive: true });
    await writeFile(join(outside, "x", "existing.yaml"), "# was here before\n");
    const payload = { name: "injected.yaml", mode: "100644", content: "kind: ClusterRoleBinding\n" };
    const { url } = await symlinkSubmodules(outside, "x", payload);

    await assert.rejects(
      fetcherIn(join(root.path, "cache-outside")).fetch({ syncKey: "s", spec: { repo: url } }),
      isUnsafeContent(/fsck.*duplicateEntries/),
    );
    assert.deepEqual(await readdir(join(outside, "x")), ["existing.yaml"]);
  });

  void it("refuses a submodule whose path runs through a symlink, naming it, even from objects the cache got before fetches were fsck'd", async () => {
    const cacheDir = join(root.path, "cache-seeded");
    const marker = join(root.path, "hook-ran-seeded");
    const fetcher = fetcherIn(cacheDir);
    // A first, harmless commit makes the cache repository; then the crafted objects appear in it unchecked.
    const first = await served("harmless");
    const o = first.objects;
    await o.setBranch(await o.commit(await o.tree([`100644 blob ${await o.blob("kind: ConfigMap\n")}\ta.yaml`])));
    await fetcher.fetch({ syncKey: "s", spec: { repo: first.url } });
    const cache = new Objects(join(cacheDir, "s", "repo.git"));
    const { url, commit } = await symlinkSubmodules("../../../repo.git", "hooks", hookWriting(marker), [cache]);

    await assert.rejects(
      fetcher.fetch({ syncKey: "s", spec: { repo: url } }),
      isUnsafeContent(new RegExp(`submodule m/n/hooks in commit ${commit} .* m/n is a symlink in the checkout`)),
    );
    assert.ok(!existsSync(join(cacheDir, "s", "repo.git", "hooks", "reference-transaction")));
    assert.ok(!existsSync(marker), "the hook ran");
  });

  void it("never runs a hook found in the cache repository", async () => {
    const cacheDir = join(root.path, "cache-hooks");
    const marker = join(root.path, "hook-ran-planted");
    const { objects, url } = await served("plain");
    const tree = await objects.tree([`100644 blob ${await objects.blob("kind: ConfigMap\n")}\ta.yaml`]);
    const first = await objects.commit(tree);
    await objects.setBranch(first);
    const fetcher = fetcherIn(cacheDir);
    await fetcher.fetch({ syncKey: "s", spec: { repo: url } });
    // However a file got there, git must not execute it with the reconciler's environment.
    for (const hook of ["reference-transaction", "post-checkout", "pre-auto-gc"]) {
      const path = join(cacheDir, "s", "repo.git", "hooks", hook);
      await writeFile(path, `#!/bin/sh\necho ${hook} >> ${marker}\n`);
      await chmod(path, 0o755);
    }
    await objects.setBranch(await objects.commit(tree, first));

    await fetcher.fetch({ syncKey: "s", spec: { repo: url } });

    assert.equal(existsSync(marker) ? await readFile(marker, "utf8") : "", "", "a hook ran");
  });

  void it("still fetches a commit whose author line fsck finds malformed (a bad time zone): only trees and .gitmodules are held to fsck", async () => {
    const { objects, url } = await served("old-history");
    const tree = await objects.tree([`100644 blob ${await objects.blob("kind: ConfigMap\n")}\ta.yaml`]);
    const commit = await objects.literalCommit(
      `tree ${tree}\nauthor A <a@example.com> 1234567890 +99999\ncommitter C <c@example.com> 1234567890 +0000\n\nimported\n`,
    );
    await objects.setBranch(commit);

    const result = await fetcherIn(join(root.path, "cache-old")).fetch({ syncKey: "s", spec: { repo: url } });

    assert.equal(result.commit, commit);
    assert.equal(await readFile(join(result.dir, "a.yaml"), "utf8"), "kind: ConfigMap\n");
  });
});
