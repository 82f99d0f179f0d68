import { randomUUID } from "node:crypto";
import { mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { classifyGitStderr } from "./classify.ts";
import { GitFailureReason } from "./errors.ts";
import type { GitSession } from "./git-session.ts";
import { GitExit, GitProcessError } from "./run-git.ts";

/**
 * The per-sync cache repository: a bare repository that each poll fetches into, so a poll
 * transfers only what changed. It holds one ref that matters, `refs/driftless/target`, pointing
 * at the commit being synced, which is what keeps that commit from being garbage-collected.
 * The URL is passed on every fetch instead of being stored as a remote, so changing
 * spec.git.repo needs no migration and nothing about the remote is written to disk.
 */

export const targetRef = "refs/driftless/target";
// Used only by the slow path for a commit the server will not serve by SHA.
const allRefspecs = ["+refs/heads/*:refs/driftless/heads/*", "+refs/tags/*:refs/driftless/tags/*"];
const allRefspecsUnder = (ref: string): string[] => [`+refs/heads/*:${ref}/heads/*`, `+refs/tags/*:${ref}/tags/*`];

export class CacheRepo {
  readonly #session: GitSession;
  readonly gitDir: string;
  /** Commits of history per fetch (override.gitSyncDepth); undefined: all of it. */
  readonly #depth: number | undefined;

  constructor(session: GitSession, gitDir: string, depth: number | undefined) {
    this.#session = session;
    this.gitDir = gitDir;
    this.#depth = depth;
  }

  /**
   * Creates the bare repository if missing; atomically, so a crash never leaves half of one. An
   * existing one is cleared of what a killed git left behind (see removeLeftovers).
   */
  async ensure(): Promise<void> {
    if (await isBareRepo(this.gitDir)) {
      await removeLeftovers(this.gitDir);
      return;
    }
    await rm(this.gitDir, { recursive: true, force: true });
    const parent = dirname(this.gitDir);
    await mkdir(parent, { recursive: true });
    const temp = join(parent, `.${basename(this.gitDir)}.tmp-${randomUUID()}`);
    await this.#session.run(["init", "--bare", "--quiet", temp], {
      cwd: parent,
      action: "initialise the cache repository for",
    });
    await rename(temp, this.gitDir);
  }

  async remove(): Promise<void> {
    await rm(this.gitDir, { recursive: true, force: true });
  }

  async hasCommit(sha: string): Promise<boolean> {
    try {
      await this.#session.runRaw(["cat-file", "-e", `${sha}^{commit}`], this.#local("read"));
      return true;
    } catch (error) {
      if (error instanceof GitProcessError && error.exit === GitExit.Failed) return false;
      throw this.#session.toFetchError(error, "read");
    }
  }

  /** Fetches one ref, `depth` deep, force-updating the target: a force-push is followed like any push. */
  async fetchRef(url: string, ref: string): Promise<string> {
    await this.#session.run(
      this.#fetchArgs(url, await this.#depthArgs(), [`+${ref}:${targetRef}`]),
      this.#local("fetch"),
    );
    return this.#revParse(`${targetRef}^{commit}`);
  }

  /**
   * Fetches a commit by SHA. Servers speaking protocol v2 (git ≥ 2.18, GitHub, GitLab) serve any
   * reachable commit this way, one commit deep. Older protocol servers refuse unadvertised
   * objects; then everything is fetched, as a clone would, and the commit looked up locally.
   * Returns false when the commit is not in the repository at all.
   */
  async fetchCommit(url: string, sha: string, ref = targetRef): Promise<boolean> {
    try {
      await this.#session.runRaw(
        this.#fetchArgs(url, await this.#depthArgs(), [`+${sha}:${ref}`]),
        this.#local("fetch"),
      );
      return true;
    } catch (error) {
      if (!isRefusedObject(error)) throw this.#session.toFetchError(error, "fetch");
    }
    // Another repository's branches (a submodule's) go under its own ref, beside the superproject's.
    await this.fetchAll(url, ref === targetRef ? allRefspecs : allRefspecsUnder(`${ref}-all`));
    if (!(await this.hasCommit(sha))) return false;
    await this.keep(ref, sha);
    return true;
  }

  /** Every branch and tag with full history: the slow path for a commit SHA. */
  async fetchAll(url: string, refspecs: readonly string[] = allRefspecs): Promise<void> {
    const shallow = await this.#isShallow();
    await this.#session.run(this.#fetchArgs(url, shallow ? ["--unshallow"] : [], refspecs), this.#local("fetch"));
  }

  /** Points `ref` at `sha`, which keeps the commit from being garbage-collected. */
  async keep(ref: string, sha: string): Promise<void> {
    await this.#session.run(["update-ref", "--end-of-options", ref, sha], this.#local("record"));
  }

  /**
   * Deletes the refs under `prefix` not in `keep`, so gc may prune what only they reached (a submodule
   * commit an older superproject commit pointed at): otherwise one ref per such commit for ever.
   */
  async dropRefsExcept(prefix: string, keep: ReadonlySet<string>): Promise<void> {
    const output = await this.#session.run(
      ["for-each-ref", "--format=%(refname)", "--end-of-options", prefix],
      this.#local("read"),
    );
    const stale = output.stdout.split("\n").filter((ref) => ref !== "" && !keep.has(ref));
    if (stale.length === 0) return;
    const commands = stale.map((ref) => `delete ${ref}\n`).join("");
    await this.#session.run(["update-ref", "--stdin"], { ...this.#local("record"), input: commands });
  }

  /** Writes the files of `sha`'s tree into `dir` (a submodule's place in a checkout), with an index of its own. */
  async checkOut(sha: string, dir: string): Promise<void> {
    const index = `${dir}.driftless-index-${randomUUID()}`;
    const options = {
      gitDir: this.gitDir,
      cwd: dir,
      env: { GIT_INDEX_FILE: index, GIT_WORK_TREE: dir },
      action: "check out a submodule of",
    };
    try {
      await this.#session.run(["read-tree", "--end-of-options", sha], options);
      await this.#session.run(["checkout-index", "--all", "--force"], options);
    } finally {
      await rm(index, { force: true });
    }
  }

  /** `--depth=N`; for all of history, `--unshallow` once a shallower fetch left the cache shallow. */
  async #depthArgs(): Promise<string[]> {
    if (this.#depth !== undefined) return [`--depth=${String(this.#depth)}`];
    return (await this.#isShallow()) ? ["--unshallow"] : [];
  }

  async #isShallow(): Promise<boolean> {
    const output = await this.#session.run(["rev-parse", "--is-shallow-repository"], this.#local("read"));
    return output.stdout.trim() === "true";
  }

  async #revParse(revision: string): Promise<string> {
    const args = ["rev-parse", "--verify", "--quiet", "--end-of-options", revision];
    return (await this.#session.run(args, this.#local("read"))).stdout.trim();
  }

  #fetchArgs(url: string, depth: readonly string[], refspecs: readonly string[]): string[] {
    // --no-tags: only what the spec names. --no-write-fetch-head: nothing reads it.
    // --end-of-options: the URL and refspecs are user input and must never parse as options.
    return [
      "fetch",
      ...depth,
      "--no-tags",
      "--no-write-fetch-head",
      "--no-recurse-submodules",
      "--end-of-options",
      url,
      ...refspecs,
    ];
  }

  #local(action: string): { gitDir: string; cwd: string; action: string } {
    return { gitDir: this.gitDir, cwd: this.gitDir, action };
  }
}

async function isBareRepo(gitDir: string): Promise<boolean> {
  try {
    const [head, objects] = await Promise.all([stat(join(gitDir, "HEAD")), stat(join(gitDir, "objects"))]);
    return head.isFile() && objects.isDirectory();
  } catch {
    return false;
  }
}

// Loose-object folders (objects/ab) hold thousands of files and no locks: not walked.
const looseObjectDir = /^objects\/[0-9a-f]{2}$/;

/**
 * Deletes the lock files (shallow.lock, packed-refs.lock, config.lock, refs' and any other *.lock) and
 * half-written packs (objects/pack/tmp_*, .tmp-*) of a git that was killed: a fetch cut by its deadline,
 * an abort at shutdown, an OOM kill. git never removes another process's lock, so one left behind failed
 * every later fetch ("Unable to create '.../shallow.lock': File exists"), across restarts too, as the
 * cache outlives the process. Safe because nothing else uses the repository meanwhile: our every git on
 * it runs under the sync's KeyedLock, which the caller holds; runProcessGroup returns only once a git's
 * whole process group is gone (gc.autoDetach=false keeps gc in it); and one reconciler process owns a
 * cache directory (a pod's emptyDir, process mode's folder per reconciler, where a new leader's reconciler
 * first waits for a previous leader's to exit: @driftless/sync's older-reconcilers.ts).
 */
async function removeLeftovers(gitDir: string, relative = ""): Promise<void> {
  let entries;
  try {
    entries = await readdir(join(gitDir, relative), { withFileTypes: true });
  } catch {
    return; // Vanished or unreadable: git reports what matters when it runs.
  }
  for (const entry of entries) {
    const path = relative === "" ? entry.name : `${relative}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!looseObjectDir.test(path)) await removeLeftovers(gitDir, path);
    } else if (isLeftover(path, entry.name)) {
      await rm(join(gitDir, path), { force: true });
    }
  }
}

function isLeftover(path: string, name: string): boolean {
  if (name.endsWith(".lock")) return true;
  return path.startsWith("objects/pack/") && (name.startsWith("tmp_") || name.startsWith(".tmp-"));
}

function isRefusedObject(error: unknown): boolean {
  if (!(error instanceof GitProcessError) || error.exit !== GitExit.Failed) return false;
  const reason = classifyGitStderr(error.stderr);
  return reason === GitFailureReason.RevisionNotFound || reason === GitFailureReason.RefNotFound;
}
