import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { chmod, chown, link, lstat, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { SupervisedProcess } from "./supervisor.ts";

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), "driftless-supervisor-"));
});
after(() => rm(dir, { recursive: true, force: true }));

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

const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

void describe("SupervisedProcess", () => {
  void it("reports a child it cannot start (its log folder gone) as a failure and retries, with no unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    const supervised = new SupervisedProcess({
      name: "ns-reconciler-gone",
      // The folder was removed (a teardown of the same name) between prepare and the start.
      logFile: join(dir, "removed", "reconciler.log"),
      prepare: () => Promise.resolve({ command: process.execPath, args: ["-e", "setTimeout(() => {}, 60000)"] }),
      backoff: { initialMs: 60_000, maxMs: 60_000, factor: 1, jitter: 0 },
      stableAfterMs: 1_000,
      stopGraceMs: 1_000,
      log: quiet as never,
    });
    try {
      supervised.start();
      const deadline = Date.now() + 5_000;
      while (supervised.failure === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.match(supervised.failure?.reason ?? "", /could not start the process: .*ENOENT/);
      assert.deepEqual(unhandled, []);
    } finally {
      process.off("unhandledRejection", onUnhandled);
      await supervised.stop();
    }
  });

  /** Runs a child that prints `child-output` to its log, until the line is there. */
  async function runUntilLogged(logFile: string): Promise<void> {
    const supervised = new SupervisedProcess({
      name: "root-reconciler-log",
      logFile,
      prepare: () =>
        Promise.resolve({
          command: process.execPath,
          args: ["-e", "console.log('child-output'); setTimeout(() => {}, 60000)"],
        }),
      backoff: { initialMs: 60_000, maxMs: 60_000, factor: 1, jitter: 0 },
      stableAfterMs: 1_000,
      stopGraceMs: 1_000,
      log: quiet as never,
    });
    try {
      supervised.start();
      await eventually(
        async () => ((await readFile(logFile, "utf8").catch(() => "")).includes("child-output") ? true : undefined),
        "the child's line in its log",
      );
    } finally {
      await supervised.stop();
    }
  }

  void it(
    "writes the child's log to a file of its own, not one another local user made first",
    { skip: process.getuid?.() !== 0 },
    async () => {
      const folder = await mkdtemp(join(dir, "planted-"));
      const logFile = join(folder, "reconciler.log");
      await writeFile(logFile, "");
      await chown(logFile, 65534, 65534); // nobody: another local user
      await chmod(logFile, 0o666);
      const stolen = join(folder, "stolen");
      await link(logFile, stolen);

      await runUntilLogged(logFile);

      const stats = await lstat(logFile);
      assert.equal(stats.uid, process.getuid?.());
      assert.equal(stats.mode & 0o777, 0o600);
      assert.equal(await readFile(stolen, "utf8"), "", "the log went into the other user's file");
    },
  );

  void it("kills what a child killed by SIGKILL left running in process groups of their own (a stalled git), found by its TMPDIR", async () => {
    const tmpDir = await mkdtemp(join(dir, "child-tmp-"));
    const pidFile = join(dir, "grandchild.pid");
    // As the reconciler runs git: detached (a group of its own), inheriting the child's TMPDIR, here a folder in it.
    const child = [
      `const { spawn } = require("node:child_process");`,
      `const tool = spawn(process.execPath, ["-e", "setTimeout(() => {}, 600000)"], { detached: true, stdio: "ignore", env: { ...process.env, TMPDIR: process.env.TMPDIR + "/render" } });`,
      `require("node:fs").writeFileSync(${JSON.stringify(pidFile)}, String(tool.pid));`,
      `setTimeout(() => {}, 600000);`,
    ].join("\n");
    const supervised = new SupervisedProcess({
      name: "root-reconciler-leftovers",
      logFile: join(dir, "leftovers.log"),
      prepare: () => Promise.resolve({ command: process.execPath, args: ["-e", child], env: { TMPDIR: tmpDir } }),
      backoff: { initialMs: 60_000, maxMs: 60_000, factor: 1, jitter: 0 },
      stableAfterMs: 1_000,
      stopGraceMs: 1_000,
      log: quiet as never,
    });
    // A killed orphan may stay a zombie where PID 1 does not reap: state Z counts as gone.
    const alive = (pid: number): boolean => {
      try {
        return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${String(pid)}/stat`, "utf8"));
      } catch {
        return false;
      }
    };
    let tool: number | undefined;
    try {
      supervised.start();
      tool = await eventually(
        async () => Number((await readFile(pidFile, "utf8").catch(() => "")) || Number.NaN) || undefined,
        "the child's tool to start",
      );
      assert.ok(alive(tool));
      process.kill(supervised.pid ?? Number.NaN, "SIGKILL");
      await eventually(async () => (supervised.failure === undefined ? undefined : true), "the exit to be noticed");
      await eventually(async () => (alive(tool ?? 0) ? undefined : true), "the tool to be gone");
    } finally {
      await supervised.stop();
      if (tool !== undefined && alive(tool)) process.kill(tool, "SIGKILL");
    }
  });

  void it("replaces a symlink where the log should be, leaving its target alone", async () => {
    const folder = await mkdtemp(join(dir, "linked-"));
    const elsewhere = join(folder, "elsewhere");
    await mkdir(elsewhere);
    const target = join(elsewhere, "target.log");
    await writeFile(target, "");
    const logFile = join(folder, "reconciler.log");
    await symlink(target, logFile);

    await runUntilLogged(logFile);

    assert.ok((await lstat(logFile)).isFile());
    assert.equal(await readFile(target, "utf8"), "");
  });
});
