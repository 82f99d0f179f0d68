import { test } from "node:test";
import assert from "node:assert/strict";
import { reconnectDelay, redisOptions } from "./connection.ts";

test("producers fail fast while Redis is unreachable; workers wait, as BullMQ requires", () => {
  const producer = redisOptions();
  assert.equal(producer.enableOfflineQueue, false);
  assert.equal(producer.maxRetriesPerRequest, 1);
  const worker = redisOptions({ role: "worker" });
  assert.equal(worker.enableOfflineQueue, true);
  assert.equal(worker.maxRetriesPerRequest, null);
  for (const options of [producer, worker]) {
    assert.equal(options.enableReadyCheck, true);
    assert.equal(typeof options.retryStrategy, "function");
  }
});

test("reconnects forever with backoff capped at the maximum", () => {
  const options = redisOptions({ maxReconnectDelayMs: 2_000 });
  for (const attempt of [1, 5, 50, 10_000]) {
    const delay = options.retryStrategy?.(attempt);
    assert.equal(typeof delay, "number", `attempt ${attempt} must be retried`);
    assert.ok((delay as number) > 0 && (delay as number) <= 2_000);
  }
});

test("the reconnect delay doubles per attempt, with jitter of at most 20%", () => {
  const mid = () => 0.5;
  assert.deepEqual(
    [1, 2, 3, 4].map((a) => reconnectDelay(a, 60_000, mid)),
    [50, 100, 200, 400],
  );
  assert.equal(
    reconnectDelay(1, 60_000, () => 0),
    40,
  );
  assert.equal(
    reconnectDelay(1, 60_000, () => 1),
    60,
  );
  assert.equal(
    reconnectDelay(30, 10_000, () => 1),
    10_000,
  );
});
