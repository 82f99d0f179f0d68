/**
 * The manager's queue: ensure or tear down the reconciler of each sync.
 *
 * Different syncs are processed in parallel (worker concurrency N); one sync is never processed
 * twice at once, because every job carries the sync as its de-duplication id and BullMQ keeps at
 * most one active and one waiting job per id (BullMQ's per-group concurrency is a Pro feature).
 *
 * The price: while a job for a sync waits, a newer request for that sync is folded into it, even
 * if it asks for the other action (a `teardown` arriving while an `ensure` waits). Processors must
 * therefore be level-triggered: treat the action as a hint, read the sync's current state, and do
 * what that state requires (a sync that is gone or deleting is torn down, whatever the job says).
 */
import { QueueRole } from "./hooks.ts";
import { ManagerAction, parseManagerJob, type ManagerJobData, type ManagerTrigger } from "./jobs.ts";
import { MANAGER_QUEUE, syncKey, type SyncRef } from "./names.ts";
import {
  QueueCore,
  type CloseResult,
  type EnqueueResult,
  type QueueCommonOptions,
  type QueueDepth,
  type WorkerTuning,
} from "./queue-core.ts";

export type ManagerQueueOptions = QueueCommonOptions;

export interface ManagerJob {
  readonly id: string;
  /** What was asked when the job was created; a hint, see the file comment. */
  readonly action: ManagerAction;
  readonly sync: SyncRef;
  readonly data: ManagerJobData;
  readonly attempt: number;
  readonly maxAttempts: number;
}

export type ManagerProcessor = (job: ManagerJob, signal: AbortSignal) => Promise<void>;

export interface ManagerWorkerOptions extends WorkerTuning {
  /** Syncs processed in parallel. Default 4. */
  readonly concurrency?: number;
}

export class ManagerQueue {
  readonly #core: QueueCore<ManagerJobData, ManagerAction>;

  constructor(options: ManagerQueueOptions) {
    this.#core = new QueueCore(MANAGER_QUEUE, QueueRole.Manager, options);
  }

  get name(): string {
    return this.#core.name;
  }

  get prefix(): string {
    return this.#core.prefix;
  }

  /** Asks the manager to look at `sync`. Rejects with a `retry`-class error when Redis is unreachable. */
  enqueue(
    sync: SyncRef,
    trigger: ManagerTrigger,
    action: ManagerAction = ManagerAction.Ensure,
  ): Promise<EnqueueResult> {
    const data: ManagerJobData = {
      kind: sync.kind,
      namespace: sync.namespace,
      name: sync.name,
      trigger,
      requestedAt: new Date().toISOString(),
    };
    return this.#core.add(action, data, syncKey(sync));
  }

  worker(processor: ManagerProcessor, options: ManagerWorkerOptions = {}): void {
    this.#core.startWorker(
      options.concurrency ?? 4,
      async (raw, signal) => {
        const { action, data } = parseManagerJob(this.name, raw.name, raw.data);
        const sync: SyncRef = { kind: data.kind, namespace: data.namespace, name: data.name };
        await processor({ id: raw.id, action, sync, data, attempt: raw.attempt, maxAttempts: raw.maxAttempts }, signal);
      },
      options,
    );
  }

  /** Stops taking jobs (a manager that lost its lease); see QueueCore.pauseWorker. */
  pauseWorker(): Promise<void> {
    return this.#core.pauseWorker();
  }

  workerReady(): Promise<void> {
    return this.#core.workerReady();
  }

  depth(): Promise<QueueDepth> {
    return this.#core.depth();
  }

  close(options: { readonly timeoutMs?: number } = {}): Promise<CloseResult> {
    return this.#core.close(options.timeoutMs);
  }
}
