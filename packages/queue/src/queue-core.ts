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
 *
 * Connections: the queue's own (producer) connection, and for a worker BullMQ's blocking connection
 * (a duplicate) plus a non-blocking one: a worker-role twin when the queue was given a producer
 * connection, or the queue's own when it was given a worker-role one (the reconciler's layout: two
 * connections, not three). Redis 7.0 gives a connection a 16 KiB query buffer at each command and
 * frees it ~2 s after the last one, so what a connection costs is mostly how often it talks.
 */
import { randomUUID } from "node:crypto";
import { Queue, Worker, type Job, type JobsOptions } from "bullmq";
import {
  closeRedisConnection,
  createRedisConnection,
  describeConnection,
  redactFor,
  waitsForRedis,
  workerConnection,
  type RedisConnection,
} from "./connection.ts";
import { DeadlineExceeded, QueueUnavailableError, queueOperationError, withDeadline } from "./errors.ts";
import { defaultOnError, type JobOutcome, type QueueHooks, type QueueRole } from "./hooks.ts";
import { DEFAULT_PREFIX } from "./names.ts";
import { classifyFailure, jobOptions, type Retention, type RetryPolicy } from "./retry-policy.ts";

export interface QueueCommonOptions {
  /**
   * A connection from createRedisConnection (shared, left open by close()): producer role, or
   * worker role to run the worker on it too. Or a Redis URL (a producer connection is created and
   * closed with the queue).
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
  /**
   * How long the worker's blocking fetch waits on an empty queue before asking again (a new job
   * wakes it at once, whatever this is). Default 5 s (BullMQ's).
   */
  readonly idleWaitSeconds?: number;
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

/**
 * Entries kept in a queue's events stream: none. Nothing in driftless reads it (no QueueEvents), a
 * job's outcome is kept in the job itself (the last completed, the last 20 failed), the logs and
 * the metrics. BullMQ trims it approximately (`XADD MAXLEN ~`), which keeps whole stream nodes of up
 * to 4 KiB, so any count above 0 cost ~4.7 KiB per queue (at 10,000, BullMQ's default, ~100 KiB).
 */
const EVENTS_KEPT = 0;

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
  /** The worker's twin of the producer connection; none when the worker shares the queue's own. */
  #workerConnection: RedisConnection | undefined;
  /** The connection has been ready: from then on, while it is not, enqueue fails at once. */
  #connected = false;
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
      streams: { events: { maxLen: EVENTS_KEPT } },
    });
    this.#queue.on("error", (error) => this.#machineryError(error));
    this.#connected = this.#connection.status === "ready";
    if (!this.#connected && waitsForRedis(this.#connection))
      this.#connection.once("ready", () => (this.#connected = true));
  }

  /**
   * A worker-role connection waits through an outage; enqueue and depth must not (a watch handler
   * or a webhook gets a retry error at once and carries on, as on a producer connection, whose
   * offline queue is off). Before the first connect they wait like BullMQ does, within the deadline.
   */
  #failFast(operation: string): void {
    if (!this.#connected || this.#connection.status === "ready" || !waitsForRedis(this.#connection)) return;
    throw new QueueUnavailableError({
      queue: this.name,
      operation,
      server: describeConnection(this.#connection),
      detail: `not connected (${this.#connection.status})`,
    });
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
    this.#failFast("enqueue");
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
    this.#failFast("depth");
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
    // BullMQ needs maxRetriesPerRequest: null on a worker's connections; a producer connection
    // fails fast instead, so the worker gets a twin with worker settings. A worker-role connection
    // serves both (enqueue fails fast by #failFast).
    this.#workerConnection = waitsForRedis(this.#connection)
      ? undefined
      : workerConnection(this.#connection, `${this.prefix}:${this.name}:worker`);
    // Three declared parameters: BullMQ only passes the abort signal to processors that declare it.
    const processor = async (
      job: Job<Data, void, Name>,
      _token: string | undefined,
      signal: AbortSignal | undefined,
    ): Promise<void> => {
      await this.#runJob(job, signal ?? NEVER_ABORTED, process);
    };
    this.#worker = new Worker<Data, void, Name>(this.name, processor, {
      connection: this.#workerConnection ?? this.#connection,
      prefix: this.prefix,
      concurrency,
      autorun: true,
      ...(tuning.lockDurationMs === undefined ? {} : { lockDuration: tuning.lockDurationMs }),
      ...(tuning.stalledIntervalMs === undefined ? {} : { stalledInterval: tuning.stalledIntervalMs }),
      ...(tuning.idleWaitSeconds === undefined ? {} : { drainDelay: tuning.idleWaitSeconds }),
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
          // With Redis away BullMQ's close would wait for ever on its worker's loop and locks (whose
          // extender timer then runs on): close without waiting for running jobs, whose outcome
          // cannot be recorded anyway.
          const redisAway = (this.#workerConnection ?? this.#connection).status !== "ready";
          await withDeadline(worker.close(redisAway), timeoutMs);
        } catch (error) {
          if (!(error instanceof DeadlineExceeded)) throw error;
          graceful = false;
          worker.cancelAllJobs(`queue ${this.name} closed after waiting ${timeoutMs} ms for the running job`);
          await stopLockRenewal(worker);
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
      // The one place a processor's failure reaches BullMQ, for every queue: the thrown error's
      // message is bounded (BullMQ stores it in the job and the events stream), see classifyFailure.
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

/**
 * BullMQ's close stops renewing job locks only once the running jobs end. A job abandoned at the
 * deadline may never end (or its end cannot be recorded while Redis is away): its lock would be renewed
 * for ever, so never taken up as stalled, and the renewal timer would keep the process alive. BullMQ has
 * no public way to stop it, hence its lock manager reached by name.
 */
async function stopLockRenewal(worker: object): Promise<void> {
  const lockManager = (worker as unknown as { lockManager?: { close?: () => Promise<void> } }).lockManager;
  if (typeof lockManager?.close !== "function") throw new Error("BullMQ's Worker has no lockManager.close()");
  await lockManager.close();
}
