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

  async close(): Promise<void> {
    await Promise.all([...this.#queues.values()].map((q) => q.close({ timeoutMs: 1_000 })));
    this.#queues.clear();
  }
}
