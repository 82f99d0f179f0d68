import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { baseGitEnv } from "./git-env.ts";
import { GitExit, GitProcessError, runGit } from "./run-git.ts";
import { tempDir } from "./testing/git-fixture.ts";

/**
 * The deadline must stop git *and* what git started: here an "ssh" that starts a grandchild and
 * waits on it forever. If only git were killed, the grandchild would keep stderr open and the
 * run would never settle, so these tests would time out instead of passing.
 */

let root: { path: string; remove: () => Promise<void> };
before(async () => {
  root = await tempDir("run-git");
});
after(async () => {
  await root.remove();
});

function hangingSshEnv(pidFile: string): NodeJS.ProcessEnv {
  return baseGitEnv(process.env, ["ssh"], { GIT_SSH_COMMAND: `sh -c 'sleep 600 & echo $! > ${pidFile}; wait' --` });
}

/** Polls a condition until it holds or the deadline passes: a wait on state, not on time. */
async function eventually<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function waitForPid(path: string): Promise<number> {
  const text = await eventually(
    async () => (await readFile(path, "utf8").catch(() => "")).trim() || undefined,
    `${path} to be written`,
  );
  return Number(text);
}

/**
 * Dead, or a zombie waiting to be reaped: either way no longer running. A killed process closes
 * its files (which lets runGit settle) a moment before /proc shows it as a zombie, hence eventually.
 */
async function assertGone(pid: number): Promise<void> {
  await eventually(
    async () => {
      const stat = await readFile(`/proc/${String(pid)}/stat`, "utf8").catch(() => undefined);
      return stat === undefined || /^\d+ \(.*\) [ZX] /.test(stat) ? true : undefined;
    },
    `process ${String(pid)} (the grandchild) to die`,
  );
}

void describe("runGit", () => {
  void it("kills git's whole process group when the deadline passes", { timeout: 20_000 }, async () => {
    const pidFile = join(root.path, "timeout.pid");
    const run = runGit(["ls-remote", "ssh://example.invalid/repo"], {
      gitBinary: "git",
      cwd: root.path,
      env: hangingSshEnv(pidFile),
      timeoutMs: 1500,
    });
    const pid = await waitForPid(pidFile);

    await assert.rejects(run, (error: unknown) => error instanceof GitProcessError && error.exit === GitExit.TimedOut);
    await assertGone(pid);
  });

  void it("kills the process group when the caller aborts", { timeout: 20_000 }, async () => {
    const pidFile = join(root.path, "abort.pid");
    const controller = new AbortController();
    const run = runGit(["ls-remote", "ssh://example.invalid/repo"], {
      gitBinary: "git",
      cwd: root.path,
      env: hangingSshEnv(pidFile),
      timeoutMs: 60_000,
      signal: controller.signal,
    });
    const pid = await waitForPid(pidFile);
    controller.abort();

    await assert.rejects(run, (error: unknown) => error instanceof GitProcessError && error.exit === GitExit.Aborted);
    await assertGone(pid);
  });

  void it("returns stdout, and stderr with the exit code on failure", async () => {
    const ok = await runGit(["--version"], {
      gitBinary: "git",
      cwd: root.path,
      env: baseGitEnv(process.env, []),
      timeoutMs: 10_000,
    });
    assert.match(ok.stdout, /^git version /);
    await assert.rejects(
      runGit(["rev-parse", "--git-dir"], {
        gitBinary: "git",
        cwd: root.path,
        env: baseGitEnv(process.env, []),
        timeoutMs: 10_000,
      }),
      (error: unknown) =>
        error instanceof GitProcessError && error.exitCode === 128 && /not a git repository/.test(error.stderr),
    );
  });

  void it("reports a missing git binary as an error rather than hanging", async () => {
    await assert.rejects(
      runGit(["--version"], { gitBinary: join(root.path, "no-such-git"), cwd: root.path, env: {}, timeoutMs: 10_000 }),
      /ENOENT/,
    );
  });
});
