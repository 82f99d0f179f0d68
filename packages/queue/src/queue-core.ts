/**
 * What a sync queue and the manager queue share: a BullMQ Queue for producing, an optional Worker
 * for consuming, de-duplicated enqueue, depth, and a graceful close. Not exported: callers use
 * SyncQueue and ManagerQueue, whose types say which jobs go where.
 *
 * De-duplication: every enqueue carries `deduplication: { id, keepLastIfActive: true }`. BullMQ
 * keeps one job per id; an enqueue while that job waits is dropped (the waiting job will see the
 * same world), and an enqueue while it is active is stored (latest payload wins) and becomes a new
 * waiting job the moment the active one finishes. So per id there is at most one active and one
 * waiting job, a trigger arriving mid-pass is never lost, and a burst collapses into one job. It
 * also means no two jobs of one id are ever active at once, whatever the worker concurrency.
 */
import { randomUUID } from "node:crypto";
import { Queue, Worker, type Job, type JobsOptions } from "bullmq";
import {
  closeRedisConnection,
  createRedisConnection,
  describeConnection,
  redactFor,
  workerConnection,
  type RedisConnection,
} from "./connection.ts";
import { DeadlineExceeded, QueueUnavailableError, queueOperationError, withDeadline } from "./errors.ts";
import { defaultOnError, type JobOutcome, type QueueHooks, type QueueRole } from "./hooks.ts";
import { DEFAULT_PREFIX } from "./names.ts";
import { classifyFailure, jobOptions, type Retention, type RetryPolicy } from "./retry-policy.ts";

export interface QueueCommonOptions {
  /**
   * A producer-role connection from createRedisConnection (shared, left open by close()), or a
   * Redis URL (a connection is created and closed with the queue).
   */
  readonly connection: RedisConnection | string;
  /** BullMQ key prefix. Default `driftless`; tests use a random one each. */
  readonly prefix?: string;
  readonly retry?: RetryPolicy;
  readonly keep?: Retention;
  /** Deadline for enqueue and depth when Redis does not answer. Default 3 s. */
  readonly operationTimeoutMs?: number;
  readonly hooks?: QueueHooks;
}

export interface WorkerTuning {
  /**
   * How long a job's lock lasts without renewal (BullMQ renews it at half this while the processor
   * runs). A worker that dies mid-job releases it after this long. Default 30 s.
   */
  readonly lockDurationMs?: number;
  /** How often stalled jobs (lock expired) are looked for and re-queued. Default 30 s. */
  readonly stalledIntervalMs?: number;
}

/** waiting includes prioritized jobs; delayed includes jobs backing off before a retry. */
export interface QueueDepth {
  readonly waiting: number;
  readonly active: number;
  readonly delayed: number;
  readonly total: number;
}

export interface EnqueueResult {
  /** The job that will carry this trigger. */
  readonly jobId: string;
  /** True when the trigger was folded into a job that already waits or runs. */
  readonly deduplicated: boolean;
}

export interface CloseResult {
  /** False when the active job did not finish within the timeout and was abandoned. */
  readonly graceful: boolean;
}

/** A job as a processor sees it, parsed later by the typed queue. */
export interface RawJob {
  readonly id: string;
  readonly name: string;
  readonly data: unknown;
  readonly attempt: number;
  readonly maxAttempts: number;
}

const NEVER_ABORTED = new AbortController().signal;

export class QueueCore<Data, Name extends string> {
  readonly name: string;
  readonly prefix: string;
  readonly role: QueueRole;
  readonly #connection: RedisConnection;
  readonly #ownsConnection: boolean;
  // Explicit data/result/name parameters: the defaults are conditional types that stay unresolved
  // for a generic Data.
  readonly #queue: Queue<Data, void, Name, Data, void, Name>;
  readonly #jobOptions: JobsOptions;
  readonly #timeoutMs: number;
  readonly #hooks: QueueHooks;
  #worker: Worker<Data, void, Name> | undefined;
  #workerConnection: RedisConnection | undefined;
  #closing: Promise<CloseResult> | undefined;

  constructor(name: string, role: QueueRole, options: QueueCommonOptions) {
    this.name = name;
    this.role = role;
    this.prefix = options.prefix ?? DEFAULT_PREFIX;
    this.#ownsConnection = typeof options.connection === "string";
    this.#connection =
      typeof options.connection === "string" ? createRedisConnection(options.connection) : options.connection;
    this.#jobOptions = jobOptions(options.retry, options.keep);
    this.#timeoutMs = options.operationTimeoutMs ?? 3_000;
    this.#hooks = options.hooks ?? {};
    this.#queue = new Queue<Data, void, Name, Data, void, Name>(name, {
      connection: this.#connection,
      prefix: this.prefix,
      // BullMQ's default keeps 10,000 events per queue; with one queue per sync that adds up, and
      // nothing here reads old events (at 1,000 they were half of a healthy sync's 200 KiB of Redis).
      streams: { events: { maxLen: 20 } },
    });
    this.#queue.on("error", (error) => this.#machineryError(error));
  }

  /** Adds a job unless one with the same de-duplication id already waits (see the file comment). */
  async add(name: Name, data: Data, deduplicationId: string): Promise<EnqueueResult> {
    if (this.#closing !== undefined) {
      throw new QueueUnavailableError({
        queue: this.name,
        operation: "enqueue",
        server: describeConnection(this.#connection),
        detail: "the queue is closed",
      });
    }
    // Our own id tells a new job (BullMQ returns it) from a de-duplicated one (BullMQ returns the
    // existing job's id).
    const jobId = randomUUID();
    try {
      const options: JobsOptions = {
        ...this.#jobOptions,
        jobId,
        deduplication: { id: deduplicationId, keepLastIfActive: true },
      };
      const job = await withDeadline(this.#queue.add(name, data, options), this.#timeoutMs);
      const id = job.id ?? jobId;
      return { jobId: id, deduplicated: id !== jobId };
    } catch (error) {
      throw this.#operationError(error, "enqueue");
    }
  }

  async depth(): Promise<QueueDepth> {
    try {
      const counts = await withDeadline(
        this.#queue.getJobCounts("waiting", "prioritized", "active", "delayed"),
        this.#timeoutMs,
      );
      const waiting = (counts["waiting"] ?? 0) + (counts["prioritized"] ?? 0);
      const active = counts["active"] ?? 0;
      const delayed = counts["delayed"] ?? 0;
      return { waiting, active, delayed, total: waiting + active + delayed };
    } catch (error) {
      throw this.#operationError(error, "depth");
    }
  }

  /** Starts consuming. One worker per queue object; it runs until close(). */
  startWorker(
    concurrency: number,
    process: (job: RawJob, signal: AbortSignal) => Promise<void>,
    tuning: WorkerTuning = {},
  ): void {
    if (this.#worker !== undefined) throw new Error(`queue ${this.name}: a worker is already running`);
    if (this.#closing !== undefined) throw new Error(`queue ${this.name}: closed`);
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
    // BullMQ needs maxRetriesPerRequest: null on a worker's connections; the producer connection
    // fails fast instead, so the worker gets a twin with worker settings.
    this.#workerConnection = workerConnection(this.#connection, `${this.prefix}:${this.name}:worker`);
    // Three declared parameters: BullMQ only passes the abort signal to processors that declare it.
    const processor = async (
      job: Job<Data, void, Name>,
      _token: string | undefined,
      signal: AbortSignal | undefined,
    ): Promise<void> => {
      await this.#runJob(job, signal ?? NEVER_ABORTED, process);
    };
    this.#worker = new Worker<Data, void, Name>(this.name, processor, {
      connection: this.#workerConnection,
      prefix: this.prefix,
      concurrency,
      autorun: true,
      ...(tuning.lockDurationMs === undefined ? {} : { lockDuration: tuning.lockDurationMs }),
      ...(tuning.stalledIntervalMs === undefined ? {} : { stalledInterval: tuning.stalledIntervalMs }),
    });
    this.#worker.on("error", (error) => this.#machineryError(error));
  }

  /**
   * Takes no new job from now on (running jobs go on; close() still waits for them). A job BullMQ
   * had already fetched may still reach the processor, which must check for itself.
   */
  async pauseWorker(): Promise<void> {
    await this.#worker?.pause(true);
  }

  /** Resolves once the worker's connections are up (for callers that must not race the first job). */
  async workerReady(): Promise<void> {
    if (this.#worker === undefined) throw new Error(`queue ${this.name}: no worker`);
    await this.#worker.waitUntilReady();
  }

  /**
   * Deletes the queue and all its jobs from Redis: for a sync that no longer exists, so dead
   * queues do not accumulate. Safe to call while nothing consumes the queue.
   */
  async obliterate(): Promise<void> {
    try {
      await withDeadline(this.#queue.obliterate({ force: true }), this.#timeoutMs);
    } catch (error) {
      throw this.#operationError(error, "obliterate");
    }
  }

  /**
   * Stops taking jobs, waits up to `timeoutMs` for running jobs to finish, then closes the
   * connections this queue owns. A job still running at the deadline receives an abort signal and
   * is abandoned: its lock expires and BullMQ re-queues it as stalled, which is safe because every
   * pass is level-triggered.
   */
  close(timeoutMs = 30_000): Promise<CloseResult> {
    this.#closing ??= this.#close(timeoutMs);
    return this.#closing;
  }

  async #close(timeoutMs: number): Promise<CloseResult> {
    let graceful = true;
    // Every step runs whatever the previous one did: a failure to close BullMQ's side cleanly must
    // not leave our connections open. Failures are reported, and the first one is rethrown.
    const failures: unknown[] = [];
    const step = async (run: () => Promise<void>): Promise<void> => {
      try {
        await run();
      } catch (error) {
        failures.push(error);
      }
    };
    const worker = this.#worker;
    if (worker !== undefined) {
      await step(async () => {
        try {
          await withDeadline(worker.close(), timeoutMs);
        } catch (error) {
          if (!(error instanceof DeadlineExceeded)) throw error;
          graceful = false;
          worker.cancelAllJobs(`queue ${this.name} closed after waiting ${timeoutMs} ms for the running job`);
        }
      });
    }
    const workerConnection = this.#workerConnection;
    if (workerConnection !== undefined) await step(() => closeRedisConnection(workerConnection));
    await step(async () => {
      // Closing a Queue that never reached Redis can wait on its connection; it holds nothing.
      await withDeadline(this.#queue.close(), 5_000).catch((error: unknown) => {
        if (!(error instanceof DeadlineExceeded)) throw error;
      });
    });
    if (this.#ownsConnection) await step(() => closeRedisConnection(this.#connection));
    if (failures.length > 0) throw failures[0];
    return { graceful };
  }

  async #runJob(
    job: Job<Data, void, Name>,
    signal: AbortSignal,
    process: (job: RawJob, signal: AbortSignal) => Promise<void>,
  ): Promise<void> {
    const attempt = job.attemptsMade + 1;
    const maxAttempts = job.opts.attempts ?? 1;
    const id = job.id ?? "";
    const started = performance.now();
    const outcome = (fields: Pick<JobOutcome, "result" | "willRetry" | "error">): JobOutcome => ({
      role: this.role,
      queue: this.name,
      jobName: job.name,
      jobId: id,
      attempt,
      durationSeconds: (performance.now() - started) / 1_000,
      ...fields,
    });
    try {
      await process({ id, name: job.name, data: job.data, attempt, maxAttempts }, signal);
    } catch (failure) {
      const classified = classifyFailure(failure, attempt, maxAttempts);
      this.#report(
        outcome({ result: classified.error.errorClass, willRetry: classified.willRetry, error: classified.error }),
      );
      throw classified.thrown;
    }
    this.#report(outcome({ result: "success", willRetry: false }));
  }

  #report(outcome: JobOutcome): void {
    try {
      this.#hooks.onJobDone?.(outcome);
    } catch (error) {
      this.#machineryError(error instanceof Error ? error : new Error(String(error)));
    }
  }

  #machineryError(error: Error): void {
    // While Redis is unreachable every command fails; the connection reports the outage once.
    if (this.#connection.status !== "ready" || this.#closing !== undefined) return;
    const message = redactFor(this.#connection, `queue ${this.name}: ${error.message}`);
    (this.#hooks.onError ?? defaultOnError)(new Error(message, { cause: error }));
  }

  #operationError(error: unknown, operation: string): Error {
    return queueOperationError(error, {
      queue: this.name,
      operation,
      server: describeConnection(this.#connection),
      connected: this.#connection.status === "ready",
      redact: (text) => redactFor(this.#connection, text),
    });
  }
}
