import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { pollPeriodMs } from "./poll-period.ts";

void describe("pollPeriodMs", () => {
  void it("reads spec.git.period, with Config Sync's 15 s when it is unset or 0", () => {
    assert.equal(pollPeriodMs("30s"), 30_000);
    assert.equal(pollPeriodMs("1m30s"), 90_000);
    assert.equal(pollPeriodMs(undefined), 15_000);
    assert.equal(pollPeriodMs("0s"), 15_000);
    assert.equal(pollPeriodMs("0"), 15_000);
    assert.equal(pollPeriodMs("soon"), 15_000);
  });

  void it("never polls more than once a second, whatever the spec says", () => {
    for (const tiny of ["1ns", "1us", "999ms", "0.5s"]) assert.equal(pollPeriodMs(tiny), 1_000, tiny);
    assert.equal(pollPeriodMs("1s"), 1_000);
  });

  void it("waits at most a day, where a longer Node timer would fire at once", () => {
    for (const long of ["25h", "600h", `${"9".repeat(400)}h`]) assert.equal(pollPeriodMs(long), 86_400_000, long);
  });
});
