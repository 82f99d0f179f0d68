import { test } from "node:test";
import assert from "node:assert/strict";
import { fork, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { HeartbeatWatchdog, isHeartbeat } from "./parent-heartbeat.ts";

/** Runs the immediates a due watchdog timer queued (its check runs after the poll phase, as in a real turn). */
const afterTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test("the watchdog fires once, a deadline after the last heartbeat, with the deadline that heartbeat named", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "Date"] });
  const silences: number[] = [];
  const watchdog = new HeartbeatWatchdog(
    (deadlineMs) => silences.push(deadlineMs),
    () => Date.now(),
  );
  const tick = async (ms: number): Promise<void> => {
    t.mock.timers.tick(ms);
    await afterTurn();
  };
  watchdog.beat(10_000);
  await tick(9_000);
  watchdog.beat(10_000);
  await tick(9_000);
  assert.deepEqual(silences, [], "fired while heartbeats came within the deadline");
  watchdog.beat(4_000);
  await tick(3_999);
  assert.deepEqual(silences, []);
  await tick(1);
  assert.deepEqual(silences, [4_000]);
  // A heartbeat after the silence (a thawed manager) does not bring the stopping child back.
  watchdog.beat(4_000);
  await tick(10_000);
  assert.deepEqual(silences, [4_000]);
});

test("the watchdog is armed only by a heartbeat, and stop() disarms it", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "Date"] });
  let fired = 0;
  const idle = new HeartbeatWatchdog(
    () => fired++,
    () => Date.now(),
  );
  t.mock.timers.tick(60_000);
  const stopped = new HeartbeatWatchdog(
    () => fired++,
    () => Date.now(),
  );
  stopped.beat(1_000);
  stopped.stop();
  t.mock.timers.tick(60_000);
  await afterTurn();
  assert.equal(fired, 0);
  idle.stop();
});

test("a child whose own event loop was blocked past the deadline reads the heartbeats that came meanwhile before judging silence", async () => {
  const silences: number[] = [];
  const watchdog = new HeartbeatWatchdog((deadlineMs) => silences.push(deadlineMs));
  watchdog.beat(50);
  // A heartbeat that arrived while the loop was blocked: handled in the same turn as the due watchdog timer.
  setTimeout(() => watchdog.beat(50), 60);
  const blockedUntil = performance.now() + 100;
  while (performance.now() < blockedUntil); // a long GC or a starved CPU
  await delay(20);
  assert.deepEqual(silences, [], "stopped although the manager's heartbeat was waiting to be read");
  // And silence is still told once the heartbeats really stop.
  await delay(150);
  assert.deepEqual(silences, [50]);
});

test("a heartbeat is a message of that type with a positive, finite deadline", () => {
  assert.ok(isHeartbeat({ type: "heartbeat", deadlineMs: 10_000 }));
  for (const message of [
    null,
    "heartbeat",
    { type: "ready" },
    { type: "heartbeat" },
    { type: "heartbeat", deadlineMs: 0 },
    { type: "heartbeat", deadlineMs: Infinity },
    { type: "heartbeat", deadlineMs: "10000" },
  ])
    assert.equal(isHeartbeat(message), false, JSON.stringify(message));
});

/** A child as the manager starts it: parent-watch first, and a graceful stop on SIGTERM (exit code 42 here). */
async function forkWatchedChild(t: { after(fn: () => Promise<void>): void }): Promise<ChildProcess> {
  const dir = await mkdtemp(join(tmpdir(), "parent-watch-"));
  const script = join(dir, "child.ts");
  await writeFile(
    script,
    `import ${JSON.stringify(join(import.meta.dirname, "parent-watch.ts"))};\n` +
      `process.once("SIGTERM", () => process.exit(42));\n` +
      `setInterval(() => undefined, 1_000);\n` +
      `process.send?.({ type: "ready" });\n`,
  );
  const child = fork(script, { stdio: ["ignore", "ignore", "pipe", "ipc"] });
  t.after(async () => {
    child.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  });
  await new Promise<void>((resolve, reject) => {
    child.once("message", () => resolve());
    child.once("exit", (code) => reject(new Error(`child exited with ${code} before it was up`)));
  });
  return child;
}

const exitOf = (child: ChildProcess): Promise<number | null> =>
  new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once("exit", (code) => resolve(code));
  });

test("a reconciler child whose manager stops sending heartbeats stops itself as on SIGTERM; one that gets them runs on", async (t) => {
  const child = await forkWatchedChild(t);
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = exitOf(child);
  // Heartbeats every 100 ms with a 400 ms deadline: four deadlines go by and it still runs.
  for (let i = 0; i < 16; i++) {
    child.send({ type: "heartbeat", deadlineMs: 400 });
    await delay(100);
  }
  assert.equal(child.exitCode, null, "the child stopped although heartbeats came");
  // The manager freezes: the channel stays open, the heartbeats stop.
  const code = await Promise.race([exited, delay(5_000).then(() => "still running 5 s after the last heartbeat")]);
  assert.equal(code, 42, `not the graceful stop: ${stderr}`);
  assert.match(stderr, /"msg":"no heartbeat from the manager: stopping/);
});
