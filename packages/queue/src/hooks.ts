/**
 * Observation points for metrics and logs. packages/queue knows nothing about prom-client; the
 * app wires these callbacks to packages/metrics.
 */
import type { DriftlessError, ErrorClass } from "@driftless/api";

/** Which kind of queue a job ran on: a bounded value, fit for a metric label. */
export const QueueRole = {
  Sync: "sync",
  Manager: "manager",
} as const;
export type QueueRole = (typeof QueueRole)[keyof typeof QueueRole];

/** How one processing attempt ended: `success`, or the class of the error it failed with. */
export type JobResult = "success" | ErrorClass;

export interface JobOutcome {
  readonly role: QueueRole;
  /** The queue's name (per sync for sync queues: not for metric labels). */
  readonly queue: string;
  readonly jobName: string;
  readonly jobId: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
  readonly durationSeconds: number;
  readonly result: JobResult;
  /** True when BullMQ will run the job again after a backoff. */
  readonly willRetry: boolean;
  readonly error?: DriftlessError;
}

export interface QueueHooks {
  /** After every processing attempt. A hook that throws is reported through onError, never fails the job. */
  readonly onJobDone?: (outcome: JobOutcome) => void;
  /**
   * Errors of the queue machinery itself (a failed lock renewal, a Redis error while connected).
   * Connection outages are reported by the connection (see createRedisConnection's `log`), not
   * here once per reconnect attempt. Default: a line on stderr.
   */
  readonly onError?: (error: Error) => void;
}

export const defaultOnError = (error: Error): void => {
  process.stderr.write(`queue: ${error.message}\n`);
};
