import { test } from "node:test";
import assert from "node:assert/strict";
import { UnrecoverableError } from "bullmq";
import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import { boundFailureMessage, classifyFailure, jobOptions, MAX_STORED_FAILURE_BYTES } from "./retry-policy.ts";

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

test("the failure BullMQ stores in Redis carries no credential written into a URL, whatever the class", () => {
  const message =
    'helm repo update failed: Error: looks like "https://user:S3cretPw@charts.example/" is not a valid chart repository';
  for (const errorClass of [ErrorClass.Retry, ErrorClass.Terminal]) {
    const error = new DriftlessError({ code: KnvCode.SourceFetch, errorClass, message });
    const classified = classifyFailure(error, 1, 3);
    assert.doesNotMatch(classified.thrown.message, /S3cretPw/, errorClass);
    assert.match(classified.thrown.message, /https:\/\/\*\*\*@charts\.example/, errorClass);
    assert.equal(classified.thrown instanceof UnrecoverableError, errorClass === ErrorClass.Terminal);
    assert.equal(classified.error, error, "hooks still get the error as thrown");
  }
});

test("jobs retry with exponential backoff and keep a bounded history", () => {
  assert.deepEqual(jobOptions({ attempts: 3, backoffMs: 500, jitter: 0 }, { completed: 1, failed: 2 }), {
    attempts: 3,
    backoff: { type: "exponential", delay: 500, jitter: 0 },
    removeOnComplete: { count: 1 },
    removeOnFail: { count: 2 },
    stackTraceLimit: 0,
  });
  const defaults = jobOptions();
  assert.equal(defaults.attempts, 5);
  // One completed job (the last pass) is enough to see what ran; failed ones carry the diagnosis.
  assert.deepEqual(defaults.removeOnComplete, { count: 1 });
  assert.deepEqual(defaults.removeOnFail, { count: 20 });
  assert.throws(() => jobOptions({ attempts: 0 }), RangeError);
});

test("what BullMQ stores of a failure is bounded, whatever the processor threw", () => {
  const huge = "x".repeat(6_500_000);
  for (const errorClass of [ErrorClass.Terminal, ErrorClass.Retry, ErrorClass.Stalled]) {
    const error = new DriftlessError({ code: KnvCode.MetadataNameCollision, errorClass, message: huge });
    const classified = classifyFailure(error, 1, 3);
    assert.ok(Buffer.byteLength(classified.thrown.message) <= MAX_STORED_FAILURE_BYTES);
    assert.ok((classified.thrown.stack ?? "").length < 2 * MAX_STORED_FAILURE_BYTES);
    assert.match(classified.thrown.message, /truncated: \d+ of 6500\d+ bytes cut\]$/);
    // The class's behaviour is unchanged, and hooks still get the whole error.
    assert.equal(classified.error, error);
    assert.equal(classified.willRetry, errorClass !== ErrorClass.Terminal);
    assert.equal(classified.thrown instanceof UnrecoverableError, errorClass === ErrorClass.Terminal);
    assert.equal(classified.thrown.name, errorClass === ErrorClass.Terminal ? "UnrecoverableError" : "DriftlessError");
  }
  const terminal = classifyFailure(
    new DriftlessError({ code: KnvCode.MetadataNameCollision, errorClass: ErrorClass.Terminal, message: huge }),
    1,
    3,
  );
  assert.ok(terminal.thrown.message.startsWith("KNV1029: xxx"));
});

test("boundFailureMessage keeps short text as it is and never splits a character", () => {
  assert.equal(boundFailureMessage("short"), "short");
  const exact = "y".repeat(MAX_STORED_FAILURE_BYTES);
  assert.equal(boundFailureMessage(exact), exact);
  const bounded = boundFailureMessage("é".repeat(10_000), 100);
  assert.ok(Buffer.byteLength(bounded) <= 100);
  assert.doesNotMatch(bounded, /\uFFFD/);
  assert.match(bounded, /^é+ \.\.\. \[truncated: \d+ of 20000 bytes cut\]$/);
  const cut = Number(/truncated: (\d+) of/.exec(bounded)?.[1]);
  assert.equal(Buffer.byteLength(bounded.slice(0, bounded.indexOf(" ..."))) + cut, 20_000);
});
