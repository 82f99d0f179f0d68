/**
 * Redis memory per sync (see docs/benchmarks.md), to size `maxmemory` in manifests/redis.yaml.
 *
 * A real redis-server holds what N syncs keep in it: one SyncQueue per sync on a worker-role
 * connection that its worker shares (two connections with BullMQ's blocking one, as a reconciler
 * has), and the manager queue with one job per sync; passes run until the retention of
 * packages/queue is full (1 completed and 20 failed jobs per queue; the events stream keeps only the
 * last script's events). Polling is an in-process timer (packages/queue poller.ts), so no
 * repeatable job lives in Redis. `INFO memory` used_memory is read before and after (BullMQ's Lua
 * scripts, ~0.5 MB once per server, are loaded by a warm-up first); the difference over N is the
 * figure per sync.
 *
 * - healthy: every pass succeeds (the steady state of a sync);
 * - failing: every pass fails all its attempts with a retry-class error (each failed job keeps the
 *   message and a stack per attempt): the worst case a sync can reach.
 *
 * BENCH_REDIS_SYNCS=10,50 sets the sizes; BENCH_REDIS_PASSES the passes per sync (default 300).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startRedis, stopProcess } from "@driftless/local-cluster";
import {
  closeRedisConnection,
  createRedisConnection,
  ManagerQueue,
  SyncQueue,
  type RedisConnection,
  type SyncRef,
} from "@driftless/queue";

const sizes = (process.env["BENCH_REDIS_SYNCS"] ?? "10,50").split(",").map(Number);
const passes = Number(process.env["BENCH_REDIS_PASSES"] ?? 300);
// Redis shrinks an idle client's buffers in its cron (a few seconds): an idle sync is read after that.
const settleMs = Number(process.env["BENCH_REDIS_SETTLE_MS"] ?? 10_000);
const root = await mkdtemp(join(tmpdir(), "driftless-bench-redis-"));
const redis = await startRedis({ dir: join(root, "redis"), detached: false });
// Worker role: commands wait for the connection instead of failing while it comes up.
const redisUrl = `redis://:${redis.password}@127.0.0.1:${redis.port}`;
const admin = createRedisConnection(redisUrl, { role: "worker", log: () => undefined });

type Scenario = "healthy" | "failing";
interface Row {
  readonly scenario: Scenario;
  readonly syncs: number;
  readonly usedBytes: number;
  readonly perSyncBytes: number;
  readonly keysPerSync: number;
  /** Of the growth per sync, what its connections' buffers hold (mem_clients_normal). */
  readonly clientBytesPerSync: number;
}

/** Of used_memory, what client connections hold (buffers), not keys. */
async function clientMemory(): Promise<number> {
  return Number(/^mem_clients_normal:(\d+)/m.exec(await admin.info("memory"))?.[1] ?? 0);
}

async function usedMemory(): Promise<number> {
  const info = await admin.info("memory");
  const match = /^used_memory:(\d+)/m.exec(info);
  if (match?.[1] === undefined) throw new Error(`no used_memory in INFO: ${info}`);
  return Number(match[1]);
}

// A message as long as a typical KNV error naming an object and the API server's answer.
const failure = `KNV2009: failed to apply ConfigMap team-a/settings: admission webhook "validate.example.com" denied the request: ${"x".repeat(200)}`;

async function measure(scenario: Scenario, syncs: number): Promise<Row> {
  await admin.flushall();
  const before = await usedMemory();
  const clientsBefore = await clientMemory();
  const connections: RedisConnection[] = [];
  const connect = (role: "producer" | "worker" = "producer"): RedisConnection => {
    const c = createRedisConnection(redisUrl, { role, log: () => undefined });
    connections.push(c);
    return c;
  };
  const manager = new ManagerQueue({ connection: connect(), prefix: "driftless" });
  manager.worker(async () => undefined, { concurrency: 4 });
  const queues: SyncQueue[] = [];
  const runs: Promise<void>[] = [];
  for (let i = 0; i < syncs; i++) {
    const sync: SyncRef = { kind: "RepoSync", namespace: `team-${i}`, name: "repo-sync" };
    const queue = new SyncQueue({
      sync,
      connection: connect("worker"),
      prefix: "driftless",
      // Failing passes back off for 1 ms instead of seconds: what is kept is the same.
      ...(scenario === "failing" ? { retry: { backoffMs: 1 } } : {}),
    });
    queues.push(queue);
    let finish: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (finish = resolve));
    // One failed job is five attempts; 110 of them overflow the retention (20 failed jobs).
    const target = scenario === "failing" ? 110 * 5 : passes;
    let attempts = 0;
    let next: () => void = () => undefined;
    queue.worker(async () => {
      attempts++;
      next();
      if (attempts >= target) finish();
      if (scenario === "failing") throw new Error(failure);
    });
    runs.push(
      (async () => {
        await queue.workerReady();
        await manager.enqueue(sync, "watch");
        while (attempts < target) {
          const ran = new Promise<void>((resolve) => (next = resolve));
          await queue.enqueue("poll");
          await ran;
        }
        await done;
      })(),
    );
  }
  await Promise.all(runs);
  // Let the last jobs move to completed/failed and retention trim them.
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  const after = await usedMemory();
  const clientsAfter = await clientMemory();
  const keys = await admin.dbsize();
  const row: Row = {
    scenario,
    syncs,
    usedBytes: after - before,
    perSyncBytes: Math.round((after - before) / syncs),
    keysPerSync: Math.round(keys / syncs),
    clientBytesPerSync: Math.round((clientsAfter - clientsBefore) / syncs),
  };
  for (const queue of queues) await queue.close({ timeoutMs: 1_000 });
  await manager.close({ timeoutMs: 1_000 });
  for (const c of connections) await closeRedisConnection(c);
  return row;
}

const rows: Row[] = [];
try {
  await measure("healthy", 1); // warm-up: the script cache is the server's, not a sync's
  for (const scenario of ["healthy", "failing"] as const) {
    for (const syncs of sizes) {
      const row = await measure(scenario, syncs);
      rows.push(row);
      process.stderr.write(`${JSON.stringify(row)}\n`);
    }
  }
} finally {
  await closeRedisConnection(admin);
  await stopProcess(redis.process.pid);
  await rm(root, { recursive: true, force: true });
}

process.stdout.write(
  "| scenario | syncs | used_memory growth | per sync | of which connections | keys per sync |\n| --- | ---: | ---: | ---: | ---: | ---: |\n",
);
for (const r of rows)
  process.stdout.write(
    `| ${r.scenario} | ${r.syncs} | ${(r.usedBytes / 2 ** 20).toFixed(1)} MiB | ${(r.perSyncBytes / 1024).toFixed(0)} KiB | ${(r.clientBytesPerSync / 1024).toFixed(0)} KiB | ${r.keysPerSync} |\n`,
  );
const out = process.env["BENCH_OUT"];
if (out !== undefined) await writeFile(out, JSON.stringify({ benchmark: "redis-memory", passes, rows }, null, 2));
