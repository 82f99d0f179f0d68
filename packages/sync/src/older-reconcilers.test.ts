import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import { createLogger } from "./log.ts";
import { olderProcessesIn, waitForOlderReconcilers } from "./older-reconcilers.ts";
import { PrivateTmpdirEnv } from "./stale-temp.ts";

const stateTmp = "/state/root-reconciler/tmp";
const reconcilerEnv = [`TMPDIR=${stateTmp}`, `${PrivateTmpdirEnv}=true`, "PATH=/usr/bin"];
let root: string;
let proc: string;

before(async () => {
  root = await mkdtemp(join(tmpdir(), "driftless-older-reconcilers-test-"));
});
after(() => rm(root, { recursive: true, force: true }));
beforeEach(async () => {
  proc = await mkdtemp(join(root, "proc-"));
});

/** A /proc/<pid> entry: stat with `state` and `startTicks` (the 22nd field), and an environment. */
async function fakeProcess(
  pid: number,
  startTicks: number,
  environment: readonly string[],
  state = "S",
  command = "node (x) y",
): Promise<void> {
  const dir = join(proc, String(pid));
  await mkdir(dir, { recursive: true });
  // state, ppid, pgrp, session, 12 more, nice, num_threads, itrealvalue, starttime.
  const fields = [
    state,
    "1",
    String(pid),
    String(pid),
    ...Array<string>(12).fill("0"),
    "0",
    "1",
    "0",
    String(startTicks),
  ];
  await writeFile(join(dir, "stat"), `${String(pid)} (${command}) ${fields.join(" ")} 0 0\n`);
  await writeFile(join(dir, "environ"), `${environment.join("\0")}\0`);
}

void describe("olderProcessesIn", () => {
  void it("finds the live processes of the same TMPDIR or a folder in it started before this one, and only those", async () => {
    await fakeProcess(100, 5000, reconcilerEnv);
    await fakeProcess(10, 1000, reconcilerEnv, "S", "node) (reconciler");
    await fakeProcess(11, 1000, reconcilerEnv, "Z"); // exited, not reaped: a frozen manager's child
    // Its git (no private mark: git's environment drops DRIFTLESS_*), which may outlive it, and its kustomize.
    await fakeProcess(12, 1000, [`TMPDIR=${stateTmp}`, "PATH=/usr/bin"]);
    await fakeProcess(13, 1000, [`TMPDIR=${stateTmp}/driftless-render-abcdef`, "PATH=/usr/bin"]);
    await fakeProcess(14, 1000, [`TMPDIR=/state/other/tmp`, `${PrivateTmpdirEnv}=true`]); // another sync's
    await fakeProcess(16, 1000, [`TMPDIR=${stateTmp}-2`, `${PrivateTmpdirEnv}=true`]); // a name that only starts alike
    await fakeProcess(15, 6000, reconcilerEnv); // younger: it waits for this one, not the reverse
    await fakeProcess(99, 5000, reconcilerEnv); // same tick, lower pid: first
    await fakeProcess(101, 5000, reconcilerEnv); // same tick, higher pid: after

    const older = olderProcessesIn(stateTmp, 100, proc);

    assert.deepEqual(
      older.map((run) => run.pid).sort((a, b) => a - b),
      [10, 12, 13, 99],
    );
  });

  void it("finds nothing without its own entry in /proc (not Linux), or without /proc", async () => {
    await fakeProcess(10, 1000, reconcilerEnv);
    assert.deepEqual(olderProcessesIn(stateTmp, 100, proc), []);
    assert.deepEqual(olderProcessesIn(stateTmp, 100, join(root, "absent")), []);
  });
});

void describe("waitForOlderReconcilers", () => {
  const env = { TMPDIR: stateTmp, [PrivateTmpdirEnv]: "true" };

  void it("returns once the older reconciler is gone, or its pid names a later process", async () => {
    await fakeProcess(process.pid, 5000, reconcilerEnv);
    await fakeProcess(10, 1000, reconcilerEnv);
    await fakeProcess(11, 1000, reconcilerEnv);
    const lines: string[] = [];
    let gone: Promise<unknown> = Promise.resolve();
    const log = createLogger(
      {},
      {
        write: (line) => {
          lines.push(line);
          // The wait has begun: the one exits, the other's pid is reused.
          if (line.includes("an older reconciler runs")) {
            gone = Promise.all([rm(join(proc, "10"), { recursive: true }), fakeProcess(11, 7000, reconcilerEnv)]);
          }
        },
      },
    );

    await waitForOlderReconcilers(env, log, new AbortController().signal, { proc });
    await gone;

    assert.match(lines[0] ?? "", /"pids":\[10,11\]/);
    assert.match(lines.at(-1) ?? "", /the older reconciler exited/);
  });

  void it("stops waiting when a stop is asked", async () => {
    await fakeProcess(process.pid, 5000, reconcilerEnv);
    await fakeProcess(10, 1000, reconcilerEnv);
    const stop = new AbortController();
    const log = createLogger({}, { write: (line) => line.includes("an older reconciler runs") && stop.abort() });

    await waitForOlderReconcilers(env, log, stop.signal, { proc });

    assert.ok(stop.signal.aborted);
  });

  void it("starts beside an older reconciler that outlives the longest wait (a frozen one)", async () => {
    await fakeProcess(process.pid, 5000, reconcilerEnv);
    await fakeProcess(10, 1000, reconcilerEnv);
    const lines: string[] = [];
    const log = createLogger({}, { write: (line) => lines.push(line) });

    await waitForOlderReconcilers(env, log, new AbortController().signal, { proc, maxWaitMs: 300 });

    assert.match(lines.at(-1) ?? "", /outlived the wait.*"pids":\[10\]/);
  });

  void it("waits for nothing when the TMPDIR is not marked as this process's own", async () => {
    await fakeProcess(process.pid, 5000, reconcilerEnv);
    await fakeProcess(10, 1000, reconcilerEnv);
    const waited = new AbortController();
    const log = createLogger({}, { write: () => waited.abort() });
    await waitForOlderReconcilers({ TMPDIR: stateTmp }, log, waited.signal, { proc });
    await waitForOlderReconcilers({ [PrivateTmpdirEnv]: "true" }, log, waited.signal, { proc });
    assert.equal(waited.signal.aborted, false);
  });
});

void describe("olderProcessesIn, in this host's /proc", () => {
  void it("sees the first of two processes of one private TMPDIR from the second, not the reverse", async (t) => {
    const tmp = join(root, "state-tmp");
    const start = (): ChildProcess => {
      const child = spawn(process.execPath, ["-e", "process.stdin.resume()"], {
        stdio: ["pipe", "ignore", "ignore"],
        env: { TMPDIR: tmp, [PrivateTmpdirEnv]: "true" },
      });
      t.after(() => child.kill("SIGKILL"));
      return child;
    };
    const first = start();
    await once(first, "spawn");
    const second = start();
    await once(second, "spawn");

    assert.deepEqual(
      olderProcessesIn(tmp, second.pid!).map((run) => run.pid),
      [first.pid],
    );
    assert.deepEqual(olderProcessesIn(tmp, first.pid!), []);
  });
});
