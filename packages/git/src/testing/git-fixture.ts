import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";

/**
 * Test-only: real repositories with real commits. A working clone is where commits are made;
 * a bare repository beside it is "the remote" that the fetcher reads (file://, or served over
 * HTTP or ssh by the other helpers).
 */

const execFileAsync = promisify(execFile);

// Deterministic identity, and no user or system config (which could sign commits or set hooks).
export const fixtureEnv: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: tmpdir(),
  LC_ALL: "C",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "Fixture",
  GIT_AUTHOR_EMAIL: "fixture@example.com",
  GIT_COMMITTER_NAME: "Fixture",
  GIT_COMMITTER_EMAIL: "fixture@example.com",
};

export async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync("git", args, { cwd, env: fixtureEnv, maxBuffer: 64 * 1024 * 1024 });
  return stdout.trim();
}

/** A temp directory removed by the returned function; realpath'd because /tmp may be a symlink. */
export async function tempDir(prefix: string): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await realpath(await mkdtemp(join(tmpdir(), `driftless-git-${prefix}-`)));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

export class SourceRepo {
  readonly work: string;
  /** The bare repository the fetcher fetches from. */
  readonly bare: string;

  private constructor(root: string) {
    this.work = join(root, "work");
    this.bare = join(root, "remote.git");
  }

  get fileUrl(): string {
    return `file://${this.bare}`;
  }

  static async create(root: string, branch = "master"): Promise<SourceRepo> {
    const repo = new SourceRepo(root);
    await mkdir(repo.work, { recursive: true });
    await git(repo.work, "init", "--quiet", `--initial-branch=${branch}`);
    await git(root, "init", "--quiet", "--bare", `--initial-branch=${branch}`, repo.bare);
    return repo;
  }

  /** Writes files (path → content; null deletes) and commits them; returns the new SHA. */
  async commit(files: Readonly<Record<string, string | null>>, message = "change"): Promise<string> {
    for (const [path, content] of Object.entries(files)) {
      const full = join(this.work, path);
      if (content === null) {
        await rm(full, { force: true, recursive: true });
      } else {
        await mkdir(dirname(full), { recursive: true });
        await writeFile(full, content);
      }
    }
    await git(this.work, "add", "--all");
    await git(this.work, "commit", "--quiet", "--allow-empty", "-m", message);
    return git(this.work, "rev-parse", "HEAD");
  }

  async push(branch: string, options: { force?: boolean } = {}): Promise<void> {
    await git(
      this.work,
      "push",
      "--quiet",
      ...(options.force === true ? ["--force"] : []),
      this.bare,
      `HEAD:refs/heads/${branch}`,
    );
  }

  async checkoutNewBranch(branch: string, from?: string): Promise<void> {
    await git(this.work, "checkout", "--quiet", "-B", branch, ...(from === undefined ? [] : [from]));
  }

  async resetHard(revision: string): Promise<void> {
    await git(this.work, "reset", "--quiet", "--hard", revision);
  }

  async tag(name: string, options: { annotated?: boolean; target?: string } = {}): Promise<void> {
    const annotation = options.annotated === true ? ["-a", "-m", `tag ${name}`] : [];
    await git(this.work, "tag", ...annotation, name, options.target ?? "HEAD");
    await git(this.work, "push", "--quiet", this.bare, `refs/tags/${name}`);
  }

  async deleteRemoteBranch(branch: string): Promise<void> {
    await git(this.bare, "update-ref", "-d", `refs/heads/${branch}`);
  }

  async setRemoteConfig(key: string, value: string): Promise<void> {
    await git(this.bare, "config", key, value);
  }
}

/** Every file under `dir` whose bytes contain `needle` (for "the secret is not on disk" checks). */
export async function filesContaining(dir: string, needle: string): Promise<string[]> {
  const hits: string[] = [];
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    if ((await readFile(path)).includes(needle)) hits.push(path);
  }
  return hits;
}
