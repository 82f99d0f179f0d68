/**
 * @driftless/queue: queue names, job types and the Redis connection (BullMQ on ioredis).
 *
 * Queues are not the source of truth: every job recomputes from Git and the cluster, and a lost job
 * is repaired by the next poll or watch event. They give retries, backoff, de-duplication (at most
 * one pass running and one waiting per sync) and visibility.
 *
 * @example
 * ```ts
 * import { closeRedisConnection, createRedisConnection, SyncQueue } from "@driftless/queue";
 *
 * const redis = createRedisConnection(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
 * const queue = new SyncQueue({
 *   sync: { kind: "RootSync", namespace: "config-management-system", name: "root-sync" },
 *   connection: redis,
 *   hooks: { onJobDone: metrics.recordJob }, // @driftless/metrics: job duration and failures
 * });
 * queue.worker(async (job, signal) => {
 *   await reconcile(job.sync, job.data.trigger, signal); // throw a terminal DriftlessError to skip retries
 * });
 * queue.startPolling(15_000, { immediate: true });
 * await queue.enqueue("drift", { reason: "ConfigMap default/settings changed" });
 * // on SIGTERM:
 * await queue.close({ timeoutMs: 30_000 });
 * await closeRedisConnection(redis);
 * ```
 */
export {
  createRedisConnection,
  closeRedisConnection,
  describeConnection,
  reconnectDelay,
  RedisRole,
  waitsForRedis,
  workerConnection,
} from "./connection.ts";
export type { RedisConnection, RedisConnectionOptions } from "./connection.ts";
export { DeadlineExceeded, QueueUnavailableError } from "./errors.ts";
export { QueueRole } from "./hooks.ts";
export type { JobOutcome, JobResult, QueueHooks } from "./hooks.ts";
export {
  ManagerAction,
  ManagerTrigger,
  parseManagerJob,
  parseReconcileJobData,
  RECONCILE_JOB,
  SyncTrigger,
} from "./jobs.ts";
export type { ManagerJobData, ReconcileJobData, ReconcileJobName } from "./jobs.ts";
export { ManagerQueue } from "./manager-queue.ts";
export type { ManagerJob, ManagerProcessor, ManagerQueueOptions, ManagerWorkerOptions } from "./manager-queue.ts";
export { DEFAULT_PREFIX, MANAGER_QUEUE, parseSyncQueueName, SyncKind, syncKey, syncQueueName } from "./names.ts";
export type { SyncRef } from "./names.ts";
export { startPoller } from "./poller.ts";
export type { Poller, PollerOptions } from "./poller.ts";
export type { CloseResult, EnqueueResult, QueueCommonOptions, QueueDepth, WorkerTuning } from "./queue-core.ts";
export { redactUrl } from "./redact.ts";
export {
  hasRedisPassword,
  isRedisUrl,
  redisPasswordOf,
  withoutRedisCredentials,
  withoutRedisPassword,
  withRedisCredentials,
  withRedisPassword,
} from "./redis-url.ts";
export { DEFAULT_RETENTION, DEFAULT_RETRY } from "./retry-policy.ts";
export type { Retention, RetryPolicy } from "./retry-policy.ts";
export { SyncQueue } from "./sync-queue.ts";
export type {
  EnqueueDetails,
  PollOptions,
  ReconcileJob,
  ReconcileProcessor,
  SyncQueueOptions,
  SyncWorkerOptions,
} from "./sync-queue.ts";
