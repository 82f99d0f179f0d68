import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { killProcessesIn } from "./leftover-processes.ts";

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), "driftless-leftovers-"));
});
after(() => rm(dir, { recursive: true, force: true }));

/** A zombie (state Z, where PID 1 does not reap) counts as gone. */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${String(pid)}/stat`, "utf8"));
  } catch {
    return false;
  }
}

async function pidIn(file: string): Promise<number> {
  for (let i = 0; i < 1000; i++) {
    const pid = Number(await readFile(file, "utf8").catch(() => ""));
    if (pid > 0) return pid;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no pid in ${file}`);
}

void describe("killProcessesIn", () => {
  void it("leaves a marked process whose parent still runs (another manager's child and its tools on a shared state folder)", async () => {
    const tmpDir = await mkdtemp(join(dir, "tmp-"));
    const pidFile = join(dir, "tool.pid");
    // The parent is unmarked and alive: the tool is not an orphan of a dead child.
    const parent = spawn(
      process.execPath,
      [
        "-e",
        [
          `const tool = require("node:child_process").spawn(process.execPath, ["-e", "setTimeout(() => {}, 600000)"], { detached: true, stdio: "ignore", env: { ...process.env, TMPDIR: ${JSON.stringify(tmpDir)} } });`,
          `require("node:fs").writeFileSync(${JSON.stringify(pidFile)}, String(tool.pid));`,
          `setTimeout(() => {}, 600000);`,
        ].join("\n"),
      ],
      { stdio: "ignore" },
    );
    const tool = await pidIn(pidFile);
    try {
      assert.deepEqual(killProcessesIn(tmpDir), []);
      assert.ok(alive(tool));
      parent.kill("SIGKILL");
      await new Promise((resolve) => parent.once("exit", resolve));
      // Its parent gone, it is an orphan of a dead process: now it goes.
      for (let i = 0; i < 1000 && alive(tool); i++) {
        if (killProcessesIn(tmpDir).length > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      for (let i = 0; i < 1000 && alive(tool); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(alive(tool), false);
      assert.deepEqual(killProcessesIn(join(dir, "elsewhere")), []);
    } finally {
      parent.kill("SIGKILL");
      if (alive(tool)) process.kill(tool, "SIGKILL");
    }
  });
});
