/**
 * driftless's own metrics (under `driftless_`): the queues, the manager's reconcilers and the
 * finalizers, which Config Sync has no metrics for.
 */
import type { Registry } from "prom-client";
import { counter, gauge, histogram, type CounterHandle, type GaugeHandle, type HistogramHandle } from "./handles.ts";
import type { FinalizerRemovalReason, JobFailure, JobResult, QueueLabel, ReconcilerState } from "./labels.ts";

/** Job durations reach well past Config Sync's 10 s bound: a first sync of a large repo takes minutes. */
export const JOB_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300] as const;

/** What a finished job attempt reports; the shape packages/queue's JobOutcome has. */
export interface JobAttempt {
  readonly role: QueueLabel;
  readonly result: JobResult;
  readonly durationSeconds: number;
}

/** Anything that can say how many jobs it holds (packages/queue's SyncQueue and ManagerQueue can). */
export interface DepthSource {
  depth(): Promise<{ readonly total: number }>;
}

export interface DriftlessMetrics {
  /** driftless_queue_depth{queue}: jobs waiting, running or backing off. */
  readonly queueDepth: GaugeHandle<{ queue: QueueLabel }>;
  /** driftless_job_duration_seconds{queue,result}. */
  readonly jobDuration: HistogramHandle<{ queue: QueueLabel; result: JobResult }>;
  /** driftless_job_failures_total{queue,result}. */
  readonly jobFailures: CounterHandle<{ queue: QueueLabel; result: JobFailure }>;
  /** driftless_reconcilers{state}: reconcilers the manager runs, by state. */
  readonly reconcilers: GaugeHandle<{ state: ReconcilerState }>;
  /** driftless_finalizer_removals_total{reason}. */
  readonly finalizerRemovals: CounterHandle<{ reason: FinalizerRemovalReason }>;
  /** Records one job attempt: its duration, and a failure unless it succeeded. Fits QueueHooks.onJobDone. */
  readonly recordJob: (attempt: JobAttempt) => void;
  /**
   * Reads `source.depth()` into driftless_queue_depth{queue} at every scrape (summed over all
   * sources of one label). A source that cannot answer (Redis down) is left out; when none can,
   * the series disappears rather than reporting a stale number. Returns a function that stops it.
   */
  readonly watchQueueDepth: (queue: QueueLabel, source: DepthSource) => () => void;
}

export function driftlessMetrics(registry: Registry, prefix: string): DriftlessMetrics {
  const n = (name: string): string => `${prefix}${name}`;
  const sources = new Map<QueueLabel, Set<DepthSource>>();

  const queueDepth = gauge<{ queue: QueueLabel }>(
    registry,
    { name: n("queue_depth"), help: "Jobs waiting, running or backing off, by queue", labelNames: ["queue"] },
    async () => {
      await Promise.all(
        [...sources].map(async ([queue, set]) => {
          const answers = await Promise.allSettled([...set].map((source) => source.depth()));
          const totals = answers.flatMap((answer) => (answer.status === "fulfilled" ? [answer.value.total] : []));
          if (totals.length === 0) queueDepth.remove({ queue });
          else
            queueDepth.set(
              { queue },
              totals.reduce((sum, total) => sum + total, 0),
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
    queueDepth,
    jobDuration,
    jobFailures,
    reconcilers: gauge(registry, {
      name: n("reconcilers"),
      help: "Reconcilers run by the manager, by state",
      labelNames: ["state"],
    }),
    finalizerRemovals: counter(registry, {
      name: n("finalizer_removals_total"),
      help: "Finalizers removed from RootSyncs and RepoSyncs, by reason",
      labelNames: ["reason"],
    }),
    recordJob: (attempt) => {
      jobDuration.observe({ queue: attempt.role, result: attempt.result }, attempt.durationSeconds);
      if (attempt.result !== "success") jobFailures.inc({ queue: attempt.role, result: attempt.result });
    },
    watchQueueDepth: (queue, source) => {
      const set = sources.get(queue) ?? new Set<DepthSource>();
      sources.set(queue, set);
      set.add(source);
      return () => {
        set.delete(source);
        if (set.size === 0) {
          sources.delete(queue);
          queueDepth.remove({ queue });
        }
      };
    },
  };
}
