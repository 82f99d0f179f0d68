import { randomUUID } from "node:crypto";
import { mkdir, readdir, rename, rm, stat, utimes } from "node:fs/promises";
import { join } from "node:path";
import type { GitSession } from "./git-session.ts";

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
   * Writes the commit's files into a temporary directory through a throw-away index, then renames
   * it into place: the final path appears complete or not at all, even if the process dies.
   */
  async materialize(sha: string): Promise<string> {
    const final = this.pathFor(sha);
    if (await this.exists(sha)) return final;
    await mkdir(this.root, { recursive: true });
    const temp = join(this.root, `.tmp-${sha}-${randomUUID()}`);
    const index = `${temp}.index`;
    try {
      await mkdir(temp);
      // GIT_WORK_TREE overrides core.bare for these two commands only; the index is ours alone.
      const env = { GIT_INDEX_FILE: index, GIT_WORK_TREE: temp };
      const options = { gitDir: this.#gitDir, cwd: temp, env, action: "check out" };
      await this.#session.run(["read-tree", "--end-of-options", sha], options);
      await this.#session.run(["checkout-index", "--all", "--force"], options);
      await rename(temp, final);
    } finally {
      await rm(temp, { recursive: true, force: true });
      await rm(index, { force: true });
    }
    return final;
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
