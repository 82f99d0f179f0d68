import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import type { TestContext } from "node:test";
import { removeAfter } from "./cleanup.ts";

const run = promisify(execFile);

/**
 * A real Git repository for a test: a bare "remote" the reconciler fetches from (file://) and a
 * work tree the test edits and pushes. Every commit is a real commit.
 */
export class TestRepo {
  readonly remote: string;
  readonly work: string;
  readonly url: string;
  readonly branch: string;

  private constructor(root: string, branch: string) {
    this.remote = join(root, "remote.git");
    this.work = join(root, "work");
    this.url = `file://${this.remote}`;
    this.branch = branch;
  }

  static async create(t: TestContext, branch = "main"): Promise<TestRepo> {
    const root = await mkdtemp(join(tmpdir(), "driftless-repo-"));
    removeAfter(t, root);
    const repo = new TestRepo(root, branch);
    await run("git", ["init", "-q", "--bare", "-b", branch, repo.remote]);
    await run("git", ["init", "-q", "-b", branch, repo.work]);
    await repo.git("remote", "add", "origin", repo.remote);
    return repo;
  }

  async git(...args: string[]): Promise<string> {
    const { stdout } = await run("git", [
      "-C",
      this.work,
      "-c",
      "user.name=driftless test",
      "-c",
      "user.email=test@driftless.invalid",
      ...args,
    ]);
    return stdout.trim();
  }

  async write(path: string, content: string): Promise<void> {
    const file = join(this.work, path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, content);
  }

  async remove(path: string): Promise<void> {
    await rm(join(this.work, path), { recursive: true, force: true });
  }

  /** Commits everything in the work tree and pushes it; returns the full SHA. */
  async commit(message: string): Promise<string> {
    await this.git("add", "-A");
    await this.git("commit", "-q", "--allow-empty", "-m", message);
    await this.git("push", "-q", "--force", "origin", this.branch);
    return this.git("rev-parse", "HEAD");
  }
}
