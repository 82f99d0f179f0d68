import { test } from "node:test";
import assert from "node:assert/strict";
import { startPoller } from "./poller.ts";

/** Lets pending promise callbacks (a tick's await) run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

test("ticks once per period, never overlapping, until stopped", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  let ticks = 0;
  const poller = startPoller({
    periodMs: 1_000,
    tick: async () => void ticks++,
    onError: (error) => assert.fail(String(error)),
  });

  t.mock.timers.tick(999);
  await settle();
  assert.equal(ticks, 0);
  t.mock.timers.tick(1);
  await settle();
  assert.equal(ticks, 1);
  t.mock.timers.tick(1_000);
  await settle();
  assert.equal(ticks, 2);

  poller.stop();
  assert.equal(poller.running, false);
  t.mock.timers.tick(10_000);
  await settle();
  assert.equal(ticks, 2);
});

test("ticks at once when asked to", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  let ticks = 0;
  const poller = startPoller({
    periodMs: 1_000,
    tick: async () => void ticks++,
    onError: (error) => assert.fail(String(error)),
    immediate: true,
  });
  t.mock.timers.tick(0);
  await settle();
  assert.equal(ticks, 1);
  poller.stop();
});

test("the next period starts when a slow tick settles, so ticks never pile up", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  let release!: () => void;
  let ticks = 0;
  const poller = startPoller({
    periodMs: 100,
    tick: () => {
      ticks++;
      return new Promise<void>((resolve) => {
        release = resolve;
      });
    },
    onError: (error) => assert.fail(String(error)),
  });
  t.mock.timers.tick(100);
  await settle();
  t.mock.timers.tick(1_000);
  await settle();
  assert.equal(ticks, 1, "a second tick started while the first was still running");
  release();
  await settle();
  t.mock.timers.tick(100);
  await settle();
  assert.equal(ticks, 2);
  poller.stop();
});

test("a failed tick is reported and polling carries on", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const errors: unknown[] = [];
  let ticks = 0;
  const poller = startPoller({
    periodMs: 10,
    tick: async () => {
      ticks++;
      throw new Error("redis down");
    },
    onError: (error) => errors.push(error),
  });
  for (let i = 0; i < 3; i++) {
    t.mock.timers.tick(10);
    await settle();
  }
  assert.equal(ticks, 3);
  assert.equal(errors.length, 3);
  poller.stop();
});

test("refuses a period that is not positive", () => {
  assert.throws(() => startPoller({ periodMs: 0, tick: async () => undefined, onError: () => undefined }), RangeError);
});
