import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { SupervisedProcess } from "./supervisor.ts";

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), "driftless-supervisor-"));
});
after(() => rm(dir, { recursive: true, force: true }));

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
});
