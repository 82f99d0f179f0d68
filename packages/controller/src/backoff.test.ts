import { test } from "node:test";
import assert from "node:assert/strict";
import { Backoff, backoffDelay } from "./backoff.ts";

const policy = { initialMs: 100, maxMs: 1_000, factor: 2, jitter: 0.5 };

test("doubles from the initial delay up to the cap", () => {
  const noJitter = () => 0;
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6].map((n) => backoffDelay(policy, n, noJitter)),
    [100, 200, 400, 800, 1_000, 1_000],
  );
});

test("jitter only shortens a delay, by at most the jitter fraction", () => {
  assert.equal(
    backoffDelay(policy, 3, () => 0.999999),
    200,
  );
  for (let i = 0; i < 100; i++) {
    const d = backoffDelay(policy, 3);
    assert.ok(d >= 200 && d <= 400, `delay ${d} outside [200, 400]`);
  }
});

test("a huge attempt number neither overflows nor exceeds the cap", () => {
  assert.equal(
    backoffDelay(policy, 10_000, () => 0),
    1_000,
  );
});

test("Backoff counts failures and starts over after reset", () => {
  const b = new Backoff(policy, () => 0);
  assert.deepEqual([b.next(), b.next(), b.next()], [100, 200, 400]);
  assert.equal(b.attempts, 3);
  b.reset();
  assert.equal(b.next(), 100);
});
