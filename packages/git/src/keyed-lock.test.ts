import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { KeyedLock } from "./keyed-lock.ts";

/** A promise the test resolves by hand, so ordering is decided by the test, not by timers. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

void describe("KeyedLock", () => {
  void it("runs tasks of one key one at a time, in order, and tasks of other keys alongside", async () => {
    const lock = new KeyedLock();
    const events: string[] = [];
    const first = gate();
    const a1 = lock.run("a", async () => {
      events.push("a1 start");
      await first.promise;
      events.push("a1 end");
    });
    const a2 = lock.run("a", async () => {
      events.push("a2 start");
    });
    const b1 = lock.run("b", async () => {
      events.push("b1 start");
    });
    await b1;
    assert.deepEqual(events, ["a1 start", "b1 start"], "b is not blocked by a; a2 waits for a1");
    first.open();
    await Promise.all([a1, a2]);
    assert.deepEqual(events, ["a1 start", "b1 start", "a1 end", "a2 start"]);
    assert.deepEqual(lock.activeKeys, []);
  });

  void it("keeps going after a task fails, and returns each task's own result or error", async () => {
    const lock = new KeyedLock();
    const failed = lock.run("k", () => Promise.reject(new Error("boom")));
    const next = lock.run("k", () => Promise.resolve(42));
    await assert.rejects(failed, /boom/);
    assert.equal(await next, 42);
  });
});
