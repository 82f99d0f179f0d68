import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { leaderElectionTimings } from "./leader-election.ts";
import { heartbeatTiming, sendHeartbeats } from "./child-heartbeat.ts";

test("children hear every retry period and stop at the renew deadline, before a standby may take the lease", () => {
  const timings = leaderElectionTimings();
  const timing = heartbeatTiming(timings);
  assert.deepEqual(timing, { everyMs: 2_000, deadlineMs: 10_000 });
  assert.ok(timing.deadlineMs < timings.leaseDurationMs);
  assert.ok(timing.everyMs < timing.deadlineMs / 2, "one lost heartbeat stops a child");
  assert.deepEqual(
    heartbeatTiming(leaderElectionTimings({ leaseDurationMs: 6_000, renewDeadlineMs: 4_000, retryPeriodMs: 500 })),
    {
      everyMs: 500,
      deadlineMs: 4_000,
    },
  );
});

test("a child gets a heartbeat at once and then every period, until it exits", async () => {
  // A child that reports each heartbeat's arrival back, and exits after the third.
  const child = spawn(
    process.execPath,
    [
      "-e",
      `let n = 0; process.on("message", (m) => { process.send({ got: m, at: Date.now() }); if (++n === 3) process.disconnect(); });`,
    ],
    { stdio: ["ignore", "ignore", "inherit", "ipc"] },
  );
  const started = Date.now();
  const received: { got: unknown; at: number }[] = [];
  child.on("message", (m) => received.push(m as { got: unknown; at: number }));
  sendHeartbeats(child, { everyMs: 150, deadlineMs: 1_000 });
  await new Promise((resolve) => child.once("exit", resolve));
  assert.equal(received.length, 3);
  for (const r of received) assert.deepEqual(r.got, { type: "heartbeat", deadlineMs: 1_000 });
  const [first, , third] = received.map((r) => r.at - started);
  assert.ok(first !== undefined && first < 1_000, `the first heartbeat came ${first} ms after the start`);
  assert.ok(third !== undefined && third >= 300, `three heartbeats in ${third} ms: not one per period`);
});
