import { realpath, stat } from "node:fs/promises";
import { join, sep } from "node:path";
import { ErrorClass } from "@driftless/api";
import { GitFailureReason } from "./errors.ts";
import type { GitFetchError } from "./errors.ts";
import type { GitSession } from "./git-session.ts";
import { GitExit, GitProcessError } from "./run-git.ts";

/**
 * `spec.git.dir` must name a directory of the commit. Checked in git's object database first
 * (cheap, no checkout needed), then on disk with symlinks resolved, so the returned path can never
 * lead a reader outside the checkout. git's tree lookup does not follow symlinks: a dir that is, or
 * passes through, a symlink of the commit is left to the check on disk, which follows it as Config
 * Sync does (`envs/prod -> ../config` syncs `config`) as long as it stays inside the checkout.
 */
export async function checkDirInCommit(session: GitSession, gitDir: string, sha: string, dir: string): Promise<void> {
  if (dir === ".") return;
  let type: string;
  try {
    const output = await session.runRaw(["cat-file", "-t", "--end-of-options", `${sha}:${dir}`], {
      gitDir,
      cwd: gitDir,
      action: "read",
    });
    type = output.stdout.trim();
  } catch (error) {
    if (!(error instanceof GitProcessError) || error.exit !== GitExit.Failed) throw session.toFetchError(error, "read");
    type = "missing";
  }
  if (type === "tree" || (await throughSymlink(session, gitDir, sha, dir))) return;
  const roots = await topLevelDirectories(session, gitDir, sha);
  const found = type === "missing" ? "does not exist" : "is not a directory";
  throw dirError(
    session,
    `spec.git.dir ${JSON.stringify(dir)} ${found} in commit ${sha} (${session.description}) of ${session.displayRepo}; ` +
      `directories at the repository root: ${roots.length === 0 ? "none" : roots.join(", ")}`,
  );
}

/** Joins dir to the checkout and proves, after resolving symlinks, that it stays inside. */
export async function resolveSourceDir(session: GitSession, checkout: string, dir: string): Promise<string> {
  const joined = dir === "." ? checkout : join(checkout, dir);
  const [root, real] = await Promise.all([realpath(checkout), realpath(joined).catch(() => undefined)]);
  if (real === undefined || !(await stat(real)).isDirectory()) {
    throw dirError(
      session,
      `spec.git.dir ${JSON.stringify(dir)} is not a directory in the checkout of ${session.description} of ${session.displayRepo}`,
    );
  }
  if (real !== root && !real.startsWith(root + sep)) {
    throw dirError(
      session,
      `spec.git.dir ${JSON.stringify(dir)} resolves outside the repository checkout; symlinks may not lead out of it`,
    );
  }
  return joined;
}

/** Whether `dir` or a directory above it is a symlink in the commit (git's mode 120000). */
async function throughSymlink(session: GitSession, gitDir: string, sha: string, dir: string): Promise<boolean> {
  const parts = dir.split("/");
  for (let depth = 1; depth <= parts.length; depth++) {
    const prefix = parts.slice(0, depth).join("/");
    const output = await session.run(["ls-tree", "--end-of-options", sha, "--", prefix], {
      gitDir,
      cwd: gitDir,
      action: "read",
    });
    const mode = output.stdout.split(" ")[0];
    if (mode === "120000") return true;
    if (mode !== "040000") return false;
  }
  return false;
}

async function topLevelDirectories(session: GitSession, gitDir: string, sha: string): Promise<string[]> {
  const output = await session.run(["ls-tree", "-d", "--name-only", "--end-of-options", sha], {
    gitDir,
    cwd: gitDir,
    action: "read",
  });
  const names = output.stdout.split("\n").filter((name) => name !== "");
  return names.length > 20 ? [...names.slice(0, 20), `… (${String(names.length - 20)} more)`] : names;
}

function dirError(session: GitSession, message: string): GitFetchError {
  return session.error(GitFailureReason.DirNotFound, message, undefined, ErrorClass.Terminal);
}
