/**
 * How failed jobs are retried and how finished jobs are kept.
 *
 * - `retry` and `stalled` errors: retried with exponential backoff, up to `attempts`.
 * - `terminal` errors (configuration the user must fix): failed at once through BullMQ's
 *   UnrecoverableError, never retried in a hot loop. The next poll or trigger runs a fresh pass,
 *   which is when a fixed configuration gets picked up anyway.
 */
import { DriftlessError, ErrorClass, toDriftlessError } from "@driftless/api";
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
 * carry the diagnosis (their error and a stack per attempt); a completed one only says a pass ran,
 * so one is kept (the last), at ~1.2 KiB each per sync.
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
  };
}

/** What a processor's failure means for the job. */
export interface ClassifiedFailure {
  readonly error: DriftlessError;
  /** What to throw back to BullMQ. */
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
    const thrown = new UnrecoverableError(`${error.code}: ${error.message}`);
    return { error, thrown, willRetry: false };
  }
  return { error, thrown: error, willRetry: attempt < maxAttempts };
}
