import assert from "node:assert/strict";
import { it } from "node:test";
import { createLogger } from "./log.ts";
import { PassLane } from "./pass-lane.ts";
import type { PassTrigger } from "./pass.ts";

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A pass that runs until `finish` is called, recording when it begins and ends. */
function gatedPasses() {
  const events: string[] = [];
  const gates: (() => void)[] = [];
  const run = (label: string) =>
    new Promise<void>((resolve) => {
      events.push(`begin ${label}`);
      gates.push(() => {
        events.push(`end ${label}`);
        resolve();
      });
    });
  const finish = async (): Promise<void> => {
    await tick();
    const gate = gates.shift();
    assert.ok(gate !== undefined, `no pass is running: ${events.join(", ")}`);
    gate();
    await tick();
  };
  return { events, run, finish };
}

function lane(run: (trigger: PassTrigger) => Promise<void>, lines: string[] = []): PassLane {
  return new PassLane(run, createLogger({}, { write: (line) => void lines.push(line) }));
}

void it("a queue job arriving while a pass runs in-process waits for it: never two passes at once", async () => {
  const passes = gatedPasses();
  const passLane = lane((trigger) => passes.run(`here:${trigger}`));
  passLane.runHere("poll", new Error("Redis unavailable"));
  const job = passLane.serial(() => passes.run("job"));
  await passes.finish();
  await passes.finish();
  await job;
  assert.deepEqual(passes.events, ["begin here:poll", "end here:poll", "begin job", "end job"]);
});

void it("folds in-process requests made while one runs into one waiting pass, which carries the latest trigger", async () => {
  const passes = gatedPasses();
  const passLane = lane((trigger) => passes.run(trigger));
  passLane.runHere("poll", new Error("down"));
  await tick();
  passLane.runHere("drift", new Error("down"));
  passLane.runHere("poll", new Error("down"));
  passLane.runHere("webhook", new Error("down"));
  await passes.finish();
  await passes.finish();
  assert.deepEqual(passes.events, ["begin poll", "end poll", "begin webhook", "end webhook"]);
});

void it("logs once at warn as passes begin to run here, and once at info when the queue takes them again", async () => {
  const lines: string[] = [];
  const passLane = lane(() => Promise.resolve(), lines);
  passLane.runHere("poll", new Error("queue x: enqueue failed: Redis at redis://127.0.0.1:1 is unavailable"));
  passLane.runHere("poll", new Error("again"));
  assert.equal(passLane.bypassingQueue, true);
  passLane.queueTook();
  passLane.queueTook();
  assert.equal(passLane.bypassingQueue, false);
  const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.deepEqual(
    logged.map((l) => [l["level"], l["msg"]]),
    [
      ["warn", "queue unavailable: running passes in this process until it is back"],
      ["info", "queue available again: passes run through it"],
    ],
  );
  assert.match(String(logged[0]?.["error"]), /Redis at redis:\/\/127\.0\.0\.1:1 is unavailable/);
});

void it("once closed starts no pass here and resolves when the running one has ended", async () => {
  const passes = gatedPasses();
  const passLane = lane((trigger) => passes.run(trigger));
  passLane.runHere("poll", new Error("down"));
  await tick();
  passLane.runHere("drift", new Error("down"));
  let closed = false;
  const closing = passLane.close().then(() => (closed = true));
  passLane.runHere("webhook", new Error("down"));
  await passes.finish();
  await closing;
  assert.equal(closed, true);
  assert.deepEqual(passes.events, ["begin poll", "end poll"]);
});
