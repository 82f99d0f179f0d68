/**
 * How failed jobs are retried and how finished jobs are kept.
 *
 * - `retry` and `stalled` errors: retried with exponential backoff, up to `attempts`.
 * - `terminal` errors (configuration the user must fix): failed at once through BullMQ's
 *   UnrecoverableError, never retried in a hot loop. The next poll or trigger runs a fresh pass,
 *   which is when a fixed configuration gets picked up anyway.
 */
import { DriftlessError, ErrorClass, redactCredentials, toDriftlessError } from "@driftless/api";
import { UnrecoverableError, type JobsOptions } from "bullmq";

export interface RetryPolicy {
  /** Attempts per job, the first one included. Default 5. */
  readonly attempts?: number;
  /** Delay before the first retry; doubles with every further retry. Default 1 s. */
  readonly backoffMs?: number;
  /** Fraction of each delay that is randomised (0..1), so failing syncs spread out. Default 0.2. */
  readonly jitter?: number;
}

/**
 * How many finished jobs Redis keeps per queue, for inspection; older ones are deleted. Failed jobs
 * carry the diagnosis (their error message, at most MAX_STORED_FAILURE_BYTES; no stack); a completed
 * one only says a pass ran, so one is kept (the last), at ~1.2 KiB each per sync.
 */
export interface Retention {
  /** Default 1. */
  readonly completed?: number;
  /** Default 20. */
  readonly failed?: number;
}

export const DEFAULT_RETRY = { attempts: 5, backoffMs: 1_000, jitter: 0.2 } as const;
export const DEFAULT_RETENTION = { completed: 1, failed: 20 } as const;

/** BullMQ job options for one enqueue. */
export function jobOptions(retry: RetryPolicy = {}, keep: Retention = {}): JobsOptions {
  const attempts = retry.attempts ?? DEFAULT_RETRY.attempts;
  if (!Number.isInteger(attempts) || attempts < 1)
    throw new RangeError(`attempts must be a positive integer, got ${attempts}`);
  return {
    attempts,
    backoff: {
      type: "exponential",
      delay: retry.backoffMs ?? DEFAULT_RETRY.backoffMs,
      jitter: retry.jitter ?? DEFAULT_RETRY.jitter,
    },
    removeOnComplete: { count: keep.completed ?? DEFAULT_RETENTION.completed },
    removeOnFail: { count: keep.failed ?? DEFAULT_RETENTION.failed },
    // BullMQ would keep the thrown error's stack per attempt, and a stack starts with the whole
    // message: nothing reads it (the logs have the error), so none is stored.
    stackTraceLimit: 0,
  };
}

/**
 * The most of a failure's message BullMQ stores in Redis (UTF-8 bytes, marker included). The message
 * lands in the job (failedReason) and in the events stream entry, and the last `Retention.failed`
 * jobs are kept per queue: an unbounded message (a source error listing thousands of paths was
 * 6.5 MB) cost ~21 MB of Redis per failed job, and with noeviction a dozen of them stopped every
 * queue. The whole error still reaches the onJobDone hook (logs, status), which bound it themselves.
 */
export const MAX_STORED_FAILURE_BYTES = 4 * 1024;

/** `text` cut to at most `maxBytes` UTF-8 bytes, with a marker saying how much was cut. */
export function boundFailureMessage(text: string, maxBytes = MAX_STORED_FAILURE_BYTES): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= maxBytes) return text;
  const marker = (cut: number) => ` ... [truncated: ${cut} of ${bytes.length} bytes cut]`;
  // The marker's own length depends on the cut; the widest number it can show is bytes.length.
  let keep = Math.max(0, maxBytes - Buffer.byteLength(marker(bytes.length)));
  // Never end inside a multi-byte character (continuation bytes are 10xxxxxx).
  while (keep > 0 && ((bytes[keep] ?? 0) & 0xc0) === 0x80) keep--;
  return bytes.subarray(0, keep).toString("utf8") + marker(bytes.length - keep);
}

/** What a processor's failure means for the job. */
export interface ClassifiedFailure {
  /** The failure as thrown (or wrapped), message untouched: for hooks and logs. */
  readonly error: DriftlessError;
  /**
   * What to throw back to BullMQ, whose message it stores in Redis: at most
   * MAX_STORED_FAILURE_BYTES, whatever the processor threw.
   */
  readonly thrown: Error;
  readonly willRetry: boolean;
}

/**
 * Classifies a processor failure. Unclassified errors count as `retry` (a bug or a blip: retried a
 * bounded number of times, then the next trigger runs again).
 */
export function classifyFailure(failure: unknown, attempt: number, maxAttempts: number): ClassifiedFailure {
  const error = toDriftlessError(failure);
  if (error.errorClass === ErrorClass.Terminal) {
    const thrown = new UnrecoverableError(storedMessage(`${error.code}: ${error.message}`));
    return { error, thrown, willRetry: false };
  }
  return { error, thrown: boundedForBullMQ(error), willRetry: attempt < maxAttempts };
}

/**
 * A retryable error as BullMQ should see it: itself when its message is small and clean enough, otherwise a
 * stand-in with the cut, redacted message and the same name (BullMQ tells UnrecoverableError by name; a
 * DriftlessError's never is).
 */
function boundedForBullMQ(error: DriftlessError): Error {
  const message = storedMessage(error.message);
  if (message === error.message) return error;
  const thrown = new Error(message);
  thrown.name = error.name;
  return thrown;
}

/** What Redis keeps of a failure: bounded, and with URL credentials masked, as status and logs mask them. */
function storedMessage(text: string): string {
  return boundFailureMessage(redactCredentials(text));
}
