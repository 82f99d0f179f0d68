import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Backoff } from "./backoff.ts";

void describe("Backoff", () => {
  void it("doubles up to the cap, with jitter in [0.5, 1] of the step, and resets", () => {
    const top = new Backoff({ initialMs: 100, maxMs: 1000 }, () => 1);
    assert.deepEqual([top.next(), top.next(), top.next(), top.next(), top.next()], [100, 200, 400, 800, 1000]);
    top.reset();
    assert.equal(top.next(), 100);
    const bottom = new Backoff({ initialMs: 100, maxMs: 1000 }, () => 0);
    assert.deepEqual([bottom.next(), bottom.next()], [50, 100]);
  });
});
