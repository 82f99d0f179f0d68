/**
 * The queue metrics (under `driftless_`), which Config Sync has no counterpart for: every process
 * that works a queue records its jobs, and reports how many wait, run or back off.
 */
import type { Registry } from "prom-client";
import { counter, gauge, histogram, type CounterHandle, type GaugeHandle, type HistogramHandle } from "./handles.ts";
import { JobResult, QueueJobState, type JobFailure, type QueueLabel } from "./labels.ts";

/** Job durations reach well past Config Sync's 10 s bound: a first sync of a large repo takes minutes. */
export const JOB_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300] as const;

/** What a finished job attempt reports; the shape packages/queue's JobOutcome has. */
export interface JobAttempt {
  readonly role: QueueLabel;
  readonly result: JobResult;
  readonly durationSeconds: number;
}

/** Anything that can count its unfinished jobs (packages/queue's SyncQueue and ManagerQueue can). */
export interface DepthSource {
  depth(): Promise<{ readonly waiting: number; readonly active: number; readonly delayed: number }>;
}

export interface QueueMetrics {
  /** driftless_queue_jobs{queue,state}: jobs waiting, running or backing off. */
  readonly queueJobs: GaugeHandle<{ queue: QueueLabel; state: QueueJobState }>;
  /** driftless_job_duration_seconds{queue,result}. */
  readonly jobDuration: HistogramHandle<{ queue: QueueLabel; result: JobResult }>;
  /** driftless_job_failures_total{queue,result}. */
  readonly jobFailures: CounterHandle<{ queue: QueueLabel; result: JobFailure }>;
  /** Records one job attempt: its duration, and a failure unless it succeeded. Fits QueueHooks.onJobDone. */
  readonly recordJob: (attempt: JobAttempt) => void;
  /**
   * Reads `source.depth()` into driftless_queue_jobs{queue,state} at every scrape (summed over all
   * sources of one label), and starts that queue's failure counters at 0 (so `increase()` sees the
   * first failure). A source that cannot answer (Redis down) is left out; when none can, the series
   * disappear rather than report a stale number. Returns a function that stops it.
   */
  readonly watchQueueDepth: (queue: QueueLabel, source: DepthSource) => () => void;
}

const states = Object.values(QueueJobState);
const failures = Object.values(JobResult).filter((r): r is JobFailure => r !== JobResult.Success);

export function queueMetrics(registry: Registry, prefix: string): QueueMetrics {
  const n = (name: string): string => `${prefix}${name}`;
  const sources = new Map<QueueLabel, Set<DepthSource>>();

  const clear = (queue: QueueLabel): void => {
    for (const state of states) queueJobs.remove({ queue, state });
  };
  const queueJobs = gauge<{ queue: QueueLabel; state: QueueJobState }>(
    registry,
    {
      name: n("queue_jobs"),
      help: "Jobs not yet finished, by queue and state (waiting, active, delayed for a retry)",
      labelNames: ["queue", "state"],
    },
    async () => {
      await Promise.all(
        [...sources].map(async ([queue, set]) => {
          const answers = await Promise.allSettled([...set].map((source) => source.depth()));
          const counts = answers.flatMap((answer) => (answer.status === "fulfilled" ? [answer.value] : []));
          if (counts.length === 0) return clear(queue);
          for (const state of states)
            queueJobs.set(
              { queue, state },
              counts.reduce((sum, count) => sum + count[state], 0),
            );
        }),
      );
    },
  );
  const jobDuration = histogram<{ queue: QueueLabel; result: JobResult }>(
    registry,
    {
      name: n("job_duration_seconds"),
      help: "Seconds taken by one job attempt, by queue and result",
      labelNames: ["queue", "result"],
    },
    JOB_BUCKETS,
  );
  const jobFailures = counter<{ queue: QueueLabel; result: JobFailure }>(registry, {
    name: n("job_failures_total"),
    help: "Job attempts that failed, by queue and error class",
    labelNames: ["queue", "result"],
  });

  return {
    queueJobs,
    jobDuration,
    jobFailures,
    recordJob: (attempt) => {
      jobDuration.observe({ queue: attempt.role, result: attempt.result }, attempt.durationSeconds);
      if (attempt.result !== "success") jobFailures.inc({ queue: attempt.role, result: attempt.result });
    },
    watchQueueDepth: (queue, source) => {
      const set = sources.get(queue) ?? new Set<DepthSource>();
      sources.set(queue, set);
      set.add(source);
      for (const result of failures) jobFailures.inc({ queue, result }, 0);
      return () => {
        set.delete(source);
        if (set.size === 0) {
          sources.delete(queue);
          clear(queue);
        }
      };
    },
  };
}
