/**
 * Producer handles on the sync queues (the reconcilers' own), for the webhook's immediate fetch
 * and for removing a deleted sync's queue. One BullMQ Queue per sync, created on first use and
 * kept: creating one per request would open Redis subscriptions on the hot path.
 */
import { SyncQueue, type RedisConnection, type SyncRef } from "@driftless/queue";
import { syncKeyOf } from "./workload.ts";

export class SyncQueues {
  readonly #connection: RedisConnection;
  readonly #prefix: string | undefined;
  readonly #queues = new Map<string, SyncQueue>();

  constructor(connection: RedisConnection, prefix: string | undefined) {
    this.#connection = connection;
    this.#prefix = prefix;
  }

  get(sync: SyncRef): SyncQueue {
    const key = syncKeyOf(sync);
    let queue = this.#queues.get(key);
    if (queue === undefined) {
      queue = new SyncQueue({
        sync,
        connection: this.#connection,
        ...(this.#prefix === undefined ? {} : { prefix: this.#prefix }),
      });
      this.#queues.set(key, queue);
    }
    return queue;
  }

  /** Deletes a torn-down sync's queue and its jobs from Redis. */
  async remove(sync: SyncRef): Promise<void> {
    const queue = this.get(sync);
    this.#queues.delete(syncKeyOf(sync));
    try {
      await queue.obliterate();
    } finally {
      await queue.close({ timeoutMs: 1_000 });
    }
  }

  /** How many handles are open. */
  get size(): number {
    return this.#queues.size;
  }

  /**
   * Closes the handles of syncs not in `current` (their queues stay in Redis). A standby opens one per sync a
   * push reaches and tears none down, so without this it kept a handle for every sync that ever existed.
   */
  async keepOnly(current: readonly SyncRef[]): Promise<void> {
    const keep = new Set(current.map(syncKeyOf));
    const gone = [...this.#queues].filter(([key]) => !keep.has(key));
    for (const [key] of gone) this.#queues.delete(key);
    await Promise.all(gone.map(([, queue]) => queue.close({ timeoutMs: 1_000 })));
  }

  async close(): Promise<void> {
    await Promise.all([...this.#queues.values()].map((q) => q.close({ timeoutMs: 1_000 })));
    this.#queues.clear();
  }
}
