import { test } from "node:test";
import assert from "node:assert/strict";
import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import { DeadlineExceeded, QueueUnavailableError, queueOperationError, withDeadline } from "./errors.ts";

const context = {
  queue: "q",
  operation: "enqueue",
  server: "redis://127.0.0.1:1",
  redact: (s: string) => s.replace("pw", "***"),
};

test("withDeadline passes a prompt answer through and rejects a late one", async () => {
  assert.equal(await withDeadline(Promise.resolve(7), 1_000), 7);
  await assert.rejects(withDeadline(new Promise(() => undefined), 10), DeadlineExceeded);
});

test("a rejection after the deadline is not left unhandled", async () => {
  let reject!: (error: Error) => void;
  const late = new Promise<never>((_resolve, r) => {
    reject = r;
  });
  await assert.rejects(withDeadline(late, 5), DeadlineExceeded);
  reject(new Error("late"));
  // An unhandled rejection would fail this test file.
  await new Promise((resolve) => setImmediate(resolve));
});

test("a timeout or a failure while disconnected means Redis is unavailable: a retry-class error", () => {
  const timedOut = queueOperationError(new DeadlineExceeded(100), { ...context, connected: true });
  assert.ok(timedOut instanceof QueueUnavailableError);
  assert.equal(timedOut.errorClass, ErrorClass.Retry);
  assert.equal(timedOut.code, KnvCode.Internal);
  const refused = queueOperationError(new Error("Stream isn't writeable, pw"), { ...context, connected: false });
  assert.ok(refused instanceof QueueUnavailableError);
  assert.match(
    refused.message,
    /^queue q: enqueue failed: Redis at redis:\/\/127\.0\.0\.1:1 is unavailable \(Stream isn't writeable, \*\*\*\)$/,
  );
});

test("other failures are internal errors; classified ones pass through", () => {
  const other = queueOperationError(new Error("ERR value too large"), { ...context, connected: true });
  assert.ok(!(other instanceof QueueUnavailableError));
  assert.equal(other.code, KnvCode.Internal);
  const classified = new DriftlessError({ code: KnvCode.ApiServer, errorClass: ErrorClass.Stalled, message: "x" });
  assert.equal(queueOperationError(classified, { ...context, connected: true }), classified);
});
