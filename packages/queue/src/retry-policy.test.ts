import { test } from "node:test";
import assert from "node:assert/strict";
import { UnrecoverableError } from "bullmq";
import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import { classifyFailure, jobOptions } from "./retry-policy.ts";

const failure = (errorClass: ErrorClass) =>
  new DriftlessError({ code: KnvCode.ApiServer, errorClass, message: "boom" });

test("a terminal error becomes BullMQ's UnrecoverableError, so it is never retried", () => {
  const classified = classifyFailure(failure(ErrorClass.Terminal), 1, 5);
  assert.ok(classified.thrown instanceof UnrecoverableError);
  assert.equal(classified.thrown.message, "KNV2002: boom");
  assert.equal(classified.willRetry, false);
  assert.equal(classified.error.errorClass, ErrorClass.Terminal);
});

test("retry and stalled errors are retried until the last attempt", () => {
  for (const errorClass of [ErrorClass.Retry, ErrorClass.Stalled]) {
    const error = failure(errorClass);
    assert.equal(classifyFailure(error, 1, 3).willRetry, true);
    assert.equal(classifyFailure(error, 3, 3).willRetry, false);
    assert.equal(classifyFailure(error, 1, 3).thrown, error);
  }
});

test("anything else is classified as a retryable internal error", () => {
  const classified = classifyFailure(new RangeError("oops"), 1, 2);
  assert.equal(classified.error.code, KnvCode.Internal);
  assert.equal(classified.error.errorClass, ErrorClass.Retry);
  assert.equal(classified.willRetry, true);
});

test("jobs retry with exponential backoff and keep a bounded history", () => {
  assert.deepEqual(jobOptions({ attempts: 3, backoffMs: 500, jitter: 0 }, { completed: 1, failed: 2 }), {
    attempts: 3,
    backoff: { type: "exponential", delay: 500, jitter: 0 },
    removeOnComplete: { count: 1 },
    removeOnFail: { count: 2 },
  });
  const defaults = jobOptions();
  assert.equal(defaults.attempts, 5);
  // One completed job (the last pass) is enough to see what ran; failed ones carry the diagnosis.
  assert.deepEqual(defaults.removeOnComplete, { count: 1 });
  assert.deepEqual(defaults.removeOnFail, { count: 20 });
  assert.throws(() => jobOptions({ attempts: 0 }), RangeError);
});
