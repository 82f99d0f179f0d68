import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { StartGate } from "./start-gate.ts";

void describe("StartGate", () => {
  void it("lets `limit` starts run at once and hands a freed slot to the next in line", async () => {
    const gate = new StartGate(2);
    const order: number[] = [];
    const releases = await Promise.all([gate.acquire(), gate.acquire()]);
    const third = gate.acquire().then((release) => {
      order.push(3);
      return release;
    });
    await Promise.resolve();
    assert.deepEqual(order, [], "the third waits while two are in flight");
    assert.equal(gate.inFlight, 2);
    releases[0]?.();
    releases[0]?.(); // idempotent: a second call frees nothing more
    (await third)();
    assert.deepEqual(order, [3]);
    releases[1]?.();
    assert.equal(gate.inFlight, 0);
  });

  void it("frees a slot held longer than maxHoldMs", async () => {
    const gate = new StartGate(1, 20);
    await gate.acquire(); // never released by its holder
    const release = await gate.acquire();
    release();
    assert.equal(gate.inFlight, 0);
  });
});
