import { randomUUID } from "node:crypto";
import { mkdir, readdir, rename, rm, stat, utimes } from "node:fs/promises";
import { join } from "node:path";
import type { GitSession, RunOptions } from "./git-session.ts";
import { isSafeTreePath, linkTree, removePaths, symlinkOnTheWay } from "./link-tree.ts";
import { GitExit, GitProcessError } from "./run-git.ts";

export interface Materialized {
  readonly dir: string;
  /** The checkout it was derived from by hard links, or undefined for a full checkout. */
  readonly base: string | undefined;
}

const commitName = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/**
 * One plain directory per commit under `<sync>/worktrees/<sha>`, never changed once it exists,
 * so a reader holding an older path keeps a consistent tree while a newer commit is checked out
 * beside it. No `.git` inside (unlike `git worktree add`): the source reader sees only the
 * repository's files. Directories are used most-recently-first and the oldest are removed.
 */
export class Worktrees {
  readonly #session: GitSession;
  readonly #gitDir: string;
  readonly root: string;

  constructor(session: GitSession, gitDir: string, root: string) {
    this.#session = session;
    this.#gitDir = gitDir;
    this.root = root;
  }

  pathFor(sha: string): string {
    return join(this.root, sha);
  }

  async exists(sha: string): Promise<boolean> {
    try {
      return (await stat(this.pathFor(sha))).isDirectory();
    } catch {
      return false;
    }
  }

  /**
   * Makes `<root>/<sha>`. When an older checkout exists it is copied as hard links and only the
   * paths the commit changed are written (a one-file change to a 10 000-file repository writes one
   * file); otherwise every file is written, and `addSubmodules` fills in the submodules. Either way
   * the work happens in a temporary directory renamed into place, so the final path appears complete
   * or not at all, even if the process dies.
   */
  async materialize(sha: string, addSubmodules?: (dir: string) => Promise<void>): Promise<Materialized> {
    const dir = this.pathFor(sha);
    if (await this.exists(sha)) return { dir, base: undefined };
    await mkdir(this.root, { recursive: true });
    // A commit with submodules is written in full: its gitlinks are not files diff-tree can patch.
    const base = addSubmodules === undefined ? await this.#mostRecent(sha) : undefined;
    if (base !== undefined && (await this.#attempt(sha, (temp, index) => this.#incremental(base, sha, temp, index)))) {
      return { dir, base };
    }
    await this.#attempt(sha, async (temp, index) => {
      await this.#full(sha, temp, index);
      await addSubmodules?.(temp);
      return true;
    });
    return { dir, base: undefined };
  }

  /** Fills a fresh temporary directory with `fill` and renames it into place if `fill` succeeded. */
  async #attempt(sha: string, fill: (temp: string, index: string) => Promise<boolean>): Promise<boolean> {
    const temp = join(this.root, `.tmp-${sha}-${randomUUID()}`);
    const index = `${temp}.index`;
    try {
      if (!(await fill(temp, index))) return false;
      await rename(temp, this.pathFor(sha));
      return true;
    } finally {
      await rm(temp, { recursive: true, force: true });
      await rm(index, { force: true });
    }
  }

  async #full(sha: string, temp: string, index: string): Promise<boolean> {
    await mkdir(temp);
    const options = this.#checkoutOptions(temp, index);
    await this.#session.run(["read-tree", "--end-of-options", sha], options);
    await this.#session.run(["checkout-index", "--all", "--force"], options);
    return true;
  }

  async #incremental(base: string, sha: string, temp: string, index: string): Promise<boolean> {
    let diff: string;
    try {
      const args = ["diff-tree", "-r", "-z", "--no-renames", "--name-status", "--end-of-options", base, sha];
      diff = (await this.#session.runRaw(args, { gitDir: this.#gitDir, cwd: this.#gitDir, action: "check out" }))
        .stdout;
    } catch (error) {
      // The older commit's objects may be gone (pruned, or a re-created cache); a full checkout
      // needs only the new commit.
      if (error instanceof GitProcessError && error.exit === GitExit.Failed) return false;
      throw this.#session.toFetchError(error, "check out");
    }
    const changes = parseNameStatus(diff);
    if (changes === undefined) return false;
    const paths = changes.map((change) => change.path);
    // `a -> /elsewhere` before and `a/b.yaml` now: removing `a/b.yaml` from the copy would follow the link out
    // of the checkout. A full checkout starts empty, and git writes no path through a symlink.
    if (await symlinkOnTheWay(this.pathFor(base), paths)) return false;
    await linkTree(this.pathFor(base), temp);
    await removePaths(temp, paths);
    const written = changes.filter((change) => change.status !== "D").map((change) => `${change.path}\0`);
    if (written.length > 0) {
      const options = this.#checkoutOptions(temp, index);
      await this.#session.run(["read-tree", "--end-of-options", sha], options);
      await this.#session.run(["checkout-index", "--force", "-z", "--stdin"], { ...options, input: written.join("") });
    }
    return true;
  }

  #checkoutOptions(temp: string, index: string): RunOptions {
    // GIT_WORK_TREE overrides core.bare for these commands only; the index file is ours alone.
    return {
      gitDir: this.#gitDir,
      cwd: temp,
      env: { GIT_INDEX_FILE: index, GIT_WORK_TREE: temp },
      action: "check out",
    };
  }

  /** The most recently used complete checkout other than `sha`. */
  async #mostRecent(sha: string): Promise<string | undefined> {
    let best: { name: string; used: number } | undefined;
    for (const name of await readdir(this.root)) {
      if (name === sha || !commitName.test(name)) continue;
      const used = await stat(join(this.root, name)).then(
        (info) => (info.isDirectory() ? info.mtimeMs : undefined),
        () => undefined,
      );
      if (used !== undefined && (best === undefined || used > best.used)) best = { name, used };
    }
    return best?.name;
  }

  /** Marks a checkout as just used, which is what garbage collection orders by. */
  async touch(sha: string): Promise<void> {
    const now = new Date();
    await utimes(this.pathFor(sha), now, now);
  }

  /**
   * Keeps the `keep` most recently used checkouts (always including `current`) and deletes the
   * rest, plus leftovers of interrupted checkouts. Callers hold the sync's lock, so no checkout
   * is in progress.
   */
  async collectGarbage(keep: number, current: string): Promise<readonly string[]> {
    let names: string[];
    try {
      names = await readdir(this.root);
    } catch {
      return [];
    }
    const removed: string[] = [];
    const checkouts: { name: string; used: number }[] = [];
    for (const name of names) {
      if (name.startsWith(".tmp-")) {
        await rm(join(this.root, name), { recursive: true, force: true });
        continue;
      }
      if (name === current) continue;
      try {
        checkouts.push({ name, used: (await stat(join(this.root, name))).mtimeMs });
      } catch {
        // Vanished meanwhile: nothing to collect.
      }
    }
    checkouts.sort((a, b) => b.used - a.used);
    for (const { name } of checkouts.slice(Math.max(0, keep - 1))) {
      await rm(join(this.root, name), { recursive: true, force: true });
      removed.push(name);
    }
    return removed;
  }
}

/** `git diff-tree -z --name-status` output; undefined if anything is unexpected or unsafe. */
export function parseNameStatus(output: string): { status: string; path: string }[] | undefined {
  const fields = output.split("\0");
  if (fields.at(-1) === "") fields.pop();
  if (fields.length % 2 !== 0) return undefined;
  const changes: { status: string; path: string }[] = [];
  for (let i = 0; i < fields.length; i += 2) {
    const status = fields[i] ?? "";
    const path = fields[i + 1] ?? "";
    if (!/^[ADMT]$/.test(status) || !isSafeTreePath(path)) return undefined;
    changes.push({ status, path });
  }
  return changes;
}
