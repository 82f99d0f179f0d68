/**
 * One sync's queue: triggers in, one reconcile pass at a time out.
 *
 * Every trigger (poll, webhook, drift event, manager request) becomes a `reconcile` job, and all of
 * them share one de-duplication id, so a sync has at most one pass running and one waiting. A
 * thousand drift events during a pass become one more pass, carrying the latest trigger.
 */
import { defaultOnError, QueueRole } from "./hooks.ts";
import {
  parseReconcileJobData,
  RECONCILE_JOB,
  type ReconcileJobData,
  type ReconcileJobName,
  type SyncTrigger,
} from "./jobs.ts";
import { syncQueueName, type SyncRef } from "./names.ts";
import { startPoller, type Poller } from "./poller.ts";
import {
  QueueCore,
  type CloseResult,
  type EnqueueResult,
  type QueueCommonOptions,
  type QueueDepth,
  type WorkerTuning,
} from "./queue-core.ts";

export interface SyncQueueOptions extends QueueCommonOptions {
  readonly sync: SyncRef;
}

export interface ReconcileJob {
  readonly id: string;
  readonly sync: SyncRef;
  readonly data: ReconcileJobData;
  /** 1 for the first attempt. */
  readonly attempt: number;
  readonly maxAttempts: number;
}

/**
 * One reconcile pass. Throw a DriftlessError: `terminal` fails the job without retry (the next
 * trigger runs a new pass), `retry` and `stalled` retry with backoff. The signal aborts when the
 * queue is closed and the pass outlives the close timeout.
 */
export type ReconcileProcessor = (job: ReconcileJob, signal: AbortSignal) => Promise<void>;

export interface SyncWorkerOptions extends WorkerTuning {
  /** Always 1: a sync is reconciled by one pass at a time. Accepted so call sites can say so. */
  readonly concurrency?: 1;
}

export interface EnqueueDetails {
  readonly reason?: string;
  readonly commit?: string;
}

export interface PollOptions {
  /** Enqueue a poll at once rather than after the first period. Default false. */
  readonly immediate?: boolean;
  /** Where failed polls are reported (Redis unavailable). Default: the queue's onError hook. */
  readonly onError?: (error: unknown) => void;
}

// One id for every job on the queue: the queue itself is per sync.
const DEDUPLICATION_ID = RECONCILE_JOB;

/**
 * A pass's lock, renewed at half this while it runs. A reconciler killed mid-pass (OOM, node drain)
 * leaves its job locked, and since every trigger folds into that job (one deduplication id), its
 * replacement can do nothing until the lock expires and the stalled-job check queues the job again:
 * BullMQ's 30 s + 30 s held a restarted reconciler idle for up to a minute; 10 s + 5 s bound it to
 * ~15 s. A pass never blocks the event loop for seconds (the source is read in 10 ms slices), so
 * renewal every 5 s is safe; a lock lost anyway costs one extra pass, never two at once (one worker).
 */
const syncJobLockMs = 10_000;
const syncStalledCheckMs = 5_000;

/**
 * An idle worker's blocking fetch asks again every 30 s instead of BullMQ's 5 s: a new job wakes it
 * at once either way, and Redis frees a connection's 16 KiB query buffer only after ~2 s without a
 * command, so at 5 s the blocking connection held it most of the time (~12 KiB per sync on average).
 */
const syncIdleWaitSeconds = 30;

export class SyncQueue {
  readonly sync: SyncRef;
  readonly #core: QueueCore<ReconcileJobData, ReconcileJobName>;
  readonly #onError: (error: Error) => void;
  readonly #pollers = new Set<Poller>();

  constructor(options: SyncQueueOptions) {
    this.sync = { kind: options.sync.kind, namespace: options.sync.namespace, name: options.sync.name };
    this.#core = new QueueCore(syncQueueName(this.sync), QueueRole.Sync, options);
    this.#onError = options.hooks?.onError ?? defaultOnError;
  }

  /** The queue's BullMQ name. */
  get name(): string {
    return this.#core.name;
  }

  get prefix(): string {
    return this.#core.prefix;
  }

  /**
   * Asks for a reconcile pass. Rejects with a `retry`-class QueueUnavailableError within the
   * operation timeout when Redis is unreachable.
   */
  enqueue(trigger: SyncTrigger, details: EnqueueDetails = {}): Promise<EnqueueResult> {
    const data: ReconcileJobData = {
      trigger,
      requestedAt: new Date().toISOString(),
      ...(details.reason === undefined ? {} : { reason: details.reason }),
      ...(details.commit === undefined ? {} : { commit: details.commit }),
    };
    return this.#core.add(RECONCILE_JOB, data, DEDUPLICATION_ID);
  }

  /** Starts consuming reconcile jobs, one at a time, until close(). */
  worker(processor: ReconcileProcessor, options: SyncWorkerOptions = {}): void {
    this.#core.startWorker(
      1,
      async (raw, signal) => {
        const data = parseReconcileJobData(this.name, raw.data);
        await processor(
          { id: raw.id, sync: this.sync, data, attempt: raw.attempt, maxAttempts: raw.maxAttempts },
          signal,
        );
      },
      {
        lockDurationMs: syncJobLockMs,
        stalledIntervalMs: syncStalledCheckMs,
        idleWaitSeconds: syncIdleWaitSeconds,
        ...options,
      },
    );
  }

  /** Resolves when the worker is connected and taking jobs. */
  workerReady(): Promise<void> {
    return this.#core.workerReady();
  }

  /** Enqueues a `poll` trigger every `periodMs` (spec.git.period) until stopped or closed. */
  startPolling(periodMs: number, options: PollOptions = {}): Poller {
    const onError =
      options.onError ??
      ((error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        this.#onError(new Error(`queue ${this.name}: poll not enqueued: ${message}`, { cause: error }));
      });
    const poller = startPoller({
      periodMs,
      tick: () => this.enqueue("poll"),
      onError,
      ...(options.immediate === undefined ? {} : { immediate: options.immediate }),
    });
    this.#pollers.add(poller);
    return poller;
  }

  /** Jobs waiting, running and backing off. A trigger stored behind a running pass is not counted. */
  depth(): Promise<QueueDepth> {
    return this.#core.depth();
  }

  /** Removes the queue and its jobs from Redis, for a sync that was deleted. */
  obliterate(): Promise<void> {
    return this.#core.obliterate();
  }

  /** Stops polling, lets a running pass finish (up to `timeoutMs`, default 30 s), closes connections. */
  close(options: { readonly timeoutMs?: number } = {}): Promise<CloseResult> {
    for (const poller of this.#pollers) poller.stop();
    this.#pollers.clear();
    return this.#core.close(options.timeoutMs);
  }
}
