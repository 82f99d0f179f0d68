import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatDuration, parseDuration } from "./duration.ts";

void describe("parseDuration", () => {
  void it("reads Go durations into milliseconds", () => {
    assert.equal(parseDuration("15s"), 15_000);
    assert.equal(parseDuration("1m30s"), 90_000);
    assert.equal(parseDuration("1h"), 3_600_000);
    assert.equal(parseDuration("1.5h"), 5_400_000);
    assert.equal(parseDuration("500ms"), 500);
    assert.equal(parseDuration("1500us"), 1.5);
    assert.equal(parseDuration("1500\u00b5s"), 1.5, "micro sign");
    assert.equal(parseDuration("1500\u03bcs"), 1.5, "Greek mu");
    assert.equal(parseDuration("0"), 0);
    assert.equal(parseDuration("2h45m0.5s"), 9_900_500);
  });

  void it("rejects what Go rejects, and negative durations", () => {
    for (const bad of ["", "15", "s", "15 s", "1d", "-5s", "1m30", "abc", "1.2.3s"]) {
      assert.equal(parseDuration(bad), undefined, bad);
    }
  });
});

void describe("formatDuration", () => {
  void it("prints like Go", () => {
    assert.equal(formatDuration(0), "0s");
    assert.equal(formatDuration(500), "500ms");
    assert.equal(formatDuration(15_000), "15s");
    assert.equal(formatDuration(90_000), "1m30s");
    assert.equal(formatDuration(3_600_000), "1h0m0s");
  });

  void it("round-trips through parseDuration", () => {
    for (const ms of [1_500, 61_000, 7_322_000]) assert.equal(parseDuration(formatDuration(ms)), ms);
  });
});
