import assert from "node:assert/strict";
import { it } from "node:test";
import { startSyncProgress } from "./sync-progress.ts";

/** Resolves once `condition` holds, polling each turn of the event loop (the progress runs on a timer). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

void it("stop waits for a progress write still being written and starts no other, so the pass's own status write comes last", async () => {
  const events: string[] = [];
  let finish: () => void = () => undefined;
  const progress = startSyncProgress(
    () => {
      events.push("write started");
      return new Promise<void>((resolve) => {
        finish = () => {
          events.push("write finished");
          resolve();
        };
      });
    },
    (error) => assert.fail(String(error)),
    1,
  );
  await until(() => events.length > 0);
  const stopped = progress.stop().then(() => events.push("stopped"));
  // Periods pass while the write hangs: no other write starts once stopped.
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(events, ["write started"]);
  finish();
  await stopped;
  assert.deepEqual(events, ["write started", "write finished", "stopped"]);
});

void it("a failed progress write is reported and the next period writes again", async () => {
  const errors: unknown[] = [];
  let writes = 0;
  const progress = startSyncProgress(
    () => {
      writes++;
      return writes === 1 ? Promise.reject(new Error("conflict")) : Promise.resolve();
    },
    (error) => errors.push(error),
    1,
  );
  await until(() => writes >= 2);
  await progress.stop();
  assert.equal(errors.length, 1);
  assert.match(String(errors[0]), /conflict/);
});

void it("writes nothing for a pass that ends within the period", async () => {
  let writes = 0;
  const progress = startSyncProgress(
    () => {
      writes++;
      return Promise.resolve();
    },
    () => undefined,
    60_000,
  );
  await progress.stop();
  assert.equal(writes, 0);
});

void it("a period that finds a write still in flight adds none behind it, so a slow API server gets no burst once it answers", async () => {
  let writes = 0;
  let finish: () => void = () => undefined;
  const progress = startSyncProgress(
    () => {
      writes++;
      return writes === 1 ? new Promise<void>((resolve) => (finish = resolve)) : Promise.resolve();
    },
    () => undefined,
    1,
  );
  await until(() => writes === 1);
  // Some 20 periods pass while the first write hangs.
  await new Promise((resolve) => setTimeout(resolve, 20));
  finish();
  await new Promise((resolve) => setImmediate(resolve));
  await progress.stop();
  assert.ok(writes <= 3, `${String(writes)} writes: the periods missed were sent back to back`);
});
