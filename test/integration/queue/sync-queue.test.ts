import { spawn } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import assert from "node:assert/strict";
import { Queue } from "bullmq";
import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import {
  closeRedisConnection,
  createRedisConnection,
  RedisRole,
  SyncQueue,
  type JobOutcome,
  type ReconcileJob,
  type RedisConnection,
} from "@driftless/queue";
import { eventually, testEnv } from "../../support/index.ts";
import { gate, testConnection, testPrefix, testSync } from "./helpers.ts";

function terminal(message: string): DriftlessError {
  return new DriftlessError({ code: KnvCode.InvalidSync, errorClass: ErrorClass.Terminal, message });
}

test("a burst of 1,000 triggers while nothing consumes the queue collapses into one waiting job", async (t) => {
  const queue = new SyncQueue({ sync: testSync(), connection: testConnection(t), prefix: testPrefix() });
  t.after(() => queue.close());

  const results = [];
  for (let i = 0; i < 1_000; i++) results.push(await queue.enqueue("drift", { reason: `event ${i}` }));

  assert.equal(results[0]?.deduplicated, false);
  assert.ok(
    results.slice(1).every((r) => r.deduplicated),
    "every later trigger must fold into the first job",
  );
  assert.equal(new Set(results.map((r) => r.jobId)).size, 1);
  assert.deepEqual(await queue.depth(), { waiting: 1, active: 0, delayed: 0, total: 1 });
});

test("triggers arriving mid-pass are kept as exactly one more pass, carrying the latest trigger", async (t) => {
  const queue = new SyncQueue({ sync: testSync(), connection: testConnection(t), prefix: testPrefix() });
  t.after(() => queue.close());
  const passes: ReconcileJob[] = [];
  const firstPass = gate();
  queue.worker(async (job) => {
    passes.push(job);
    if (passes.length === 1) await firstPass.promise;
  });

  await queue.enqueue("startup");
  await eventually(() => passes.length === 1, { what: "the first pass to start" });
  for (let i = 0; i < 1_000; i++) await queue.enqueue("drift", { reason: `event ${i}` });
  // The stored trigger is not a job yet: one pass runs, nothing else is queued.
  assert.deepEqual(await queue.depth(), { waiting: 0, active: 1, delayed: 0, total: 1 });

  firstPass.open();
  await eventually(async () => passes.length === 2 && (await queue.depth()).total === 0, {
    what: "the second pass to finish",
  });
  assert.equal(passes.length, 2, "a burst during a pass must become one pass, not more");
  assert.equal(passes[0]?.data.trigger, "startup");
  assert.equal(passes[1]?.data.trigger, "drift");
  assert.equal(passes[1]?.data.reason, "event 999");
});

test("never runs two passes of one sync at once, even with two workers (two processes) on its queue", async (t) => {
  const sync = testSync();
  const prefix = testPrefix();
  const connection = testConnection(t);
  const first = new SyncQueue({ sync, connection, prefix });
  const second = new SyncQueue({ sync, connection, prefix });
  const queues = [first, second];
  t.after(() => Promise.all(queues.map((q) => q.close())));
  let running = 0;
  let maxRunning = 0;
  let passes = 0;
  for (const queue of queues) {
    queue.worker(async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      // Real I/O inside the pass, so the other worker has every chance to start one too.
      await queue.depth();
      passes++;
      running--;
    });
  }

  for (let wave = 0; wave < 20; wave++) {
    await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? first : second).enqueue("drift")));
  }
  await eventually(async () => (await first.depth()).total === 0 && running === 0, { what: "the queue to drain" });

  assert.equal(maxRunning, 1);
  assert.ok(passes >= 1 && passes <= 40, `200 triggers in 20 waves ran ${passes} passes`);
});

test("hands the processor a typed job: its sync, trigger, reason, commit and request time", async (t) => {
  const sync = testSync("my.sync.with.dots");
  const queue = new SyncQueue({ sync, connection: testConnection(t), prefix: testPrefix() });
  t.after(() => queue.close());
  const jobs: ReconcileJob[] = [];
  queue.worker(async (job) => {
    jobs.push(job);
  });

  const before = Date.now();
  await queue.enqueue("webhook", { reason: "push to main", commit: "0123abcd" });
  const job = await eventually(() => jobs[0], { what: "the pass" });

  assert.deepEqual(job.sync, sync);
  assert.equal(job.data.trigger, "webhook");
  assert.equal(job.data.reason, "push to main");
  assert.equal(job.data.commit, "0123abcd");
  assert.ok(Date.parse(job.data.requestedAt) >= before - 1_000);
  assert.equal(job.attempt, 1);
  assert.equal(queue.name, `sync.reposync.${sync.namespace}.my.sync.with.dots`);
});

test("a terminal error fails the pass once, without retrying; the next trigger runs a new pass", async (t) => {
  const outcomes: JobOutcome[] = [];
  const queue = new SyncQueue({
    sync: testSync(),
    connection: testConnection(t),
    prefix: testPrefix(),
    retry: { attempts: 5, backoffMs: 10, jitter: 0 },
    hooks: { onJobDone: (outcome) => outcomes.push(outcome) },
  });
  t.after(() => queue.close());
  let calls = 0;
  queue.worker(async () => {
    calls++;
    if (calls === 1) throw terminal("spec.git.repo is empty");
  });

  await queue.enqueue("startup");
  // With 10 ms backoff a retry would be back long before the queue reads empty.
  await eventually(async () => outcomes.length === 1 && (await queue.depth()).total === 0, { what: "the failed pass" });
  assert.equal(calls, 1, "a terminal error must not be retried");
  assert.equal(outcomes[0]?.result, "terminal");
  assert.equal(outcomes[0]?.willRetry, false);
  assert.equal(outcomes[0]?.error?.code, KnvCode.InvalidSync);

  await queue.enqueue("poll");
  await eventually(() => outcomes.length === 2, { what: "the next pass" });
  assert.equal(calls, 2);
  assert.equal(outcomes[1]?.result, "success");
});

test("retry and stalled errors are retried with exponential backoff, up to the attempt limit", async (t) => {
  const outcomes: JobOutcome[] = [];
  const backoffMs = 300;
  const queue = new SyncQueue({
    sync: testSync(),
    connection: testConnection(t),
    prefix: testPrefix(),
    retry: { attempts: 3, backoffMs, jitter: 0 },
    hooks: { onJobDone: (outcome) => outcomes.push(outcome) },
  });
  t.after(() => queue.close());
  const startedAt: number[] = [];
  queue.worker(async (job) => {
    startedAt.push(performance.now());
    const errorClass = job.attempt === 1 ? ErrorClass.Stalled : ErrorClass.Retry;
    throw new DriftlessError({ code: KnvCode.ApiServer, errorClass, message: `attempt ${job.attempt} failed` });
  });

  await queue.enqueue("startup");
  await eventually(async () => (await queue.depth()).delayed === 1, { what: "the job to back off" });
  await eventually(async () => outcomes.length === 3 && (await queue.depth()).total === 0, {
    what: "all attempts",
    timeoutMs: 10_000,
  });

  assert.deepEqual(
    outcomes.map((o) => [o.attempt, o.result, o.willRetry]),
    [
      [1, "stalled", true],
      [2, "retry", true],
      [3, "retry", false],
    ],
  );
  const [first = 0, second = 0, third = 0] = startedAt;
  assert.ok(second - first >= backoffMs - 10, `first retry after ${second - first} ms, expected >= ${backoffMs}`);
  assert.ok(
    third - second >= 2 * backoffMs - 10,
    `second retry after ${third - second} ms, expected >= ${2 * backoffMs}`,
  );
});

test("an unclassified error counts as retry", async (t) => {
  const outcomes: JobOutcome[] = [];
  const queue = new SyncQueue({
    sync: testSync(),
    connection: testConnection(t),
    prefix: testPrefix(),
    retry: { attempts: 2, backoffMs: 10, jitter: 0 },
    hooks: { onJobDone: (outcome) => outcomes.push(outcome) },
  });
  t.after(() => queue.close());
  queue.worker(async () => {
    throw new TypeError("undefined is not a function");
  });

  await queue.enqueue("startup");
  await eventually(() => outcomes.length === 2, { what: "both attempts" });
  assert.deepEqual(
    outcomes.map((o) => o.result),
    ["retry", "retry"],
  );
  assert.equal(outcomes[0]?.error?.code, KnvCode.Internal);
});

test("reports each pass's duration and result to the onJobDone hook", async (t) => {
  const outcomes: JobOutcome[] = [];
  const connection = testConnection(t);
  const queue = new SyncQueue({
    sync: testSync(),
    connection,
    prefix: testPrefix(),
    hooks: { onJobDone: (o) => outcomes.push(o) },
  });
  t.after(() => queue.close());
  const pass = gate();
  let startedAt: number | undefined;
  queue.worker(async () => {
    startedAt = performance.now();
    await pass.promise;
  });

  await queue.enqueue("startup");
  const started = await eventually(() => startedAt, { what: "the pass to start" });
  for (let i = 0; i < 5; i++) await connection.ping();
  const heldMs = performance.now() - started;
  pass.open();
  const outcome = await eventually(() => outcomes[0], { what: "the outcome" });

  assert.equal(outcome.role, "sync");
  assert.equal(outcome.queue, queue.name);
  assert.equal(outcome.jobName, "reconcile");
  assert.equal(outcome.result, "success");
  assert.equal(outcome.willRetry, false);
  assert.ok(
    outcome.durationSeconds * 1_000 >= heldMs,
    `duration ${outcome.durationSeconds * 1_000} ms, held ${heldMs} ms`,
  );
});

test("close() waits for the running pass to finish", async (t) => {
  const connection = testConnection(t);
  const queue = new SyncQueue({ sync: testSync(), connection, prefix: testPrefix() });
  const pass = gate();
  const events: string[] = [];
  queue.worker(async () => {
    events.push("pass started");
    await pass.promise;
    events.push("pass finished");
  });
  await queue.enqueue("startup");
  await eventually(() => events.includes("pass started"), { what: "the pass to start" });

  const closing = queue.close({ timeoutMs: 30_000 }).then((result) => {
    events.push("closed");
    return result;
  });
  // Give a close that does not wait every chance to finish: many Redis round trips.
  for (let i = 0; i < 20; i++) await connection.ping();
  assert.deepEqual(events, ["pass started"], "close() returned while a pass was running");

  pass.open();
  assert.deepEqual(await closing, { graceful: true });
  assert.deepEqual(events, ["pass started", "pass finished", "closed"]);
  await assert.rejects(queue.enqueue("poll"), /closed/);
});

test("close() abandons a pass that outlives its timeout and aborts the pass's signal", async (t) => {
  const queue = new SyncQueue({ sync: testSync(), connection: testConnection(t), prefix: testPrefix() });
  let signal: AbortSignal | undefined;
  queue.worker(async (_job, passSignal) => {
    signal = passSignal;
    await new Promise<void>((resolve) => passSignal.addEventListener("abort", () => resolve(), { once: true }));
    throw new Error("aborted");
  });
  await queue.enqueue("startup");
  await eventually(() => signal, { what: "the pass to start" });

  const started = performance.now();
  assert.deepEqual(await queue.close({ timeoutMs: 300 }), { graceful: false });
  assert.ok(performance.now() - started < 5_000);
  assert.equal(signal?.aborted, true);
});

test("close() stops renewing the lock of a pass that ignores its abort, so the job can be taken up as stalled", async (t) => {
  // The reconciler's layout: one worker-role connection the worker shares, left open by close().
  const connection = createRedisConnection(testEnv().redisUrl, { role: RedisRole.Worker });
  t.after(() => closeRedisConnection(connection));
  const prefix = testPrefix();
  const queue = new SyncQueue({ sync: testSync(), connection, prefix });
  const pass = gate();
  // Ends the stuck pass after the test, so nothing of it outlives the file.
  t.after(() => pass.open());
  let jobId: string | undefined;
  queue.worker(
    async (job) => {
      jobId = job.id;
      await pass.promise;
    },
    { lockDurationMs: 1_000 },
  );
  await queue.enqueue("startup");
  const lockKey = `${prefix}:${queue.name}:${await eventually(() => jobId, { what: "the pass to start" })}:lock`;
  assert.equal(await connection.exists(lockKey), 1);

  assert.deepEqual(await queue.close({ timeoutMs: 300 }), { graceful: false });
  // Renewed every 500 ms while the worker holds it; left alone, it expires after 1 s.
  await eventually(async () => (await connection.exists(lockKey)) === 0, {
    what: "the abandoned job's lock to expire",
    timeoutMs: 5_000,
  });
});

test("keeps only the configured number of finished jobs in Redis", async (t) => {
  const connection = testConnection(t);
  const prefix = testPrefix();
  const outcomes: JobOutcome[] = [];
  const queue = new SyncQueue({
    sync: testSync(),
    connection,
    prefix,
    retry: { attempts: 1 },
    keep: { completed: 2, failed: 1 },
    hooks: { onJobDone: (o) => outcomes.push(o) },
  });
  t.after(() => queue.close());
  const inspector = new Queue(queue.name, { connection, prefix });
  t.after(() => inspector.close());
  let fail = false;
  queue.worker(async () => {
    if (fail) throw terminal("bad");
  });

  for (let i = 1; i <= 5; i++) {
    await queue.enqueue("poll");
    await eventually(() => outcomes.length === i, { what: `pass ${i}` });
  }
  fail = true;
  for (let i = 6; i <= 8; i++) {
    await queue.enqueue("poll");
    await eventually(() => outcomes.length === i, { what: `pass ${i}` });
  }

  const counts = await eventually(
    async () => {
      const c = await inspector.getJobCounts("completed", "failed");
      return c["completed"] === 2 && c["failed"] === 1 ? c : undefined;
    },
    { what: "old jobs to be removed" },
  );
  assert.deepEqual(counts, { completed: 2, failed: 1 });
});

test("polling enqueues poll triggers every period until stopped", async (t) => {
  const queue = new SyncQueue({ sync: testSync(), connection: testConnection(t), prefix: testPrefix() });
  t.after(() => queue.close());
  const triggers: string[] = [];
  queue.worker(async (job) => {
    triggers.push(job.data.trigger);
  });

  const poller = queue.startPolling(50, { immediate: true });
  await eventually(() => triggers.length >= 3, { what: "three polls" });
  poller.stop();

  assert.equal(poller.running, false);
  assert.ok(triggers.every((trigger) => trigger === "poll"));
});

test("obliterate() removes a deleted sync's queue and its jobs from Redis", async (t) => {
  const connection = testConnection(t);
  const prefix = testPrefix();
  const queue = new SyncQueue({ sync: testSync(), connection, prefix });
  t.after(() => queue.close());
  await queue.enqueue("poll");
  assert.equal((await queue.depth()).total, 1);

  await queue.obliterate();

  assert.deepEqual(await connection.keys(`${prefix}:${queue.name}:*`), []);
  assert.equal((await queue.depth()).total, 0);
});

test("a pass held by a reconciler that was killed is taken up by its replacement within ~15 s, not a minute", async (t) => {
  const sync = testSync();
  const prefix = testPrefix();
  const holder = spawn(
    process.execPath,
    [join(import.meta.dirname, "fixtures", "hold-sync-job.ts"), testEnv().redisUrl, prefix, JSON.stringify(sync)],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  t.after(() => holder.kill("SIGKILL"));
  let output = "";
  holder.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  await eventually(() => output.includes("holding"), {
    timeoutMs: 30_000,
    what: "the first reconciler inside its pass",
  });
  holder.kill("SIGKILL");
  await new Promise((resolve) => holder.once("exit", resolve));

  // The replacement: every trigger folds into the job the dead one holds, so it waits for the lock.
  const queue = new SyncQueue({ sync, connection: testConnection(t), prefix });
  t.after(() => queue.close());
  const passes: ReconcileJob[] = [];
  queue.worker((job) => {
    passes.push(job);
    return Promise.resolve();
  });
  const killedAt = performance.now();
  await queue.enqueue("poll");
  // BullMQ's defaults (30 s lock, 30 s stalled check) took 30-60 s here.
  await eventually(() => passes.length > 0, { timeoutMs: 25_000, intervalMs: 100, what: "a pass by the replacement" });
  t.diagnostic(
    `the replacement's first pass began ${((performance.now() - killedAt) / 1000).toFixed(1)} s after the kill`,
  );
});

/** The queue's keys but `stalled-check` (a marker with a TTL that comes and goes with the checker). */
async function queueKeys(connection: RedisConnection, queue: SyncQueue): Promise<string[]> {
  const keys = await connection.keys(`${queue.prefix}:${queue.name}:*`);
  return keys.filter((key) => !key.endsWith(":stalled-check")).sort();
}

test("a sync that keeps passing holds a constant set of keys in Redis: one finished job, and no events beyond the last pass's", async (t) => {
  const connection = testConnection(t);
  const queue = new SyncQueue({ sync: testSync(), connection, prefix: testPrefix() });
  t.after(() => queue.close());
  let passes = 0;
  queue.worker(async () => {
    passes++;
  });
  const pass = async (n: number): Promise<void> => {
    await queue.enqueue("poll");
    await eventually(async () => passes === n && (await queue.depth()).total === 0, { what: `pass ${n}` });
  };

  await pass(1);
  const afterFirst = await queueKeys(connection, queue);
  for (let n = 2; n <= 6; n++) await pass(n);
  const afterSixth = await queueKeys(connection, queue);

  // Job ids differ from pass to pass; what is kept must not grow.
  assert.equal(afterSixth.length, afterFirst.length, `${afterFirst.join(" ")}\n→ ${afterSixth.join(" ")}`);
  const events = await connection.xlen(`${queue.prefix}:${queue.name}:events`);
  assert.ok(events <= 4, `the events stream holds ${events} entries after six passes`);
});

test("a queue given a worker-role connection runs its worker on it: two connections in all, and the blocking one is quiet while nothing is queued", async (t) => {
  const prefix = testPrefix();
  const connection = createRedisConnection(testEnv().redisUrl, {
    role: RedisRole.Worker,
    connectionName: `${prefix}:own`,
    log: () => undefined,
  });
  t.after(() => closeRedisConnection(connection));
  const queue = new SyncQueue({ sync: testSync(), connection, prefix });
  t.after(() => queue.close());
  let passes = 0;
  queue.worker(async () => {
    passes++;
  });
  await queue.workerReady();
  await queue.enqueue("startup");
  await eventually(() => passes === 1, { what: "the first pass" });

  // Worker role: the look waits for its connection instead of failing before it is up.
  const look = createRedisConnection(testEnv().redisUrl, { role: RedisRole.Worker, log: () => undefined });
  t.after(() => closeRedisConnection(look));
  const clients = async (): Promise<Map<string, string>[]> =>
    String(await look.call("CLIENT", "LIST"))
      .trim()
      .split("\n")
      .map(
        (line) => new Map(line.split(" ").map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)])),
      )
      .filter((client) => client.get("name")?.startsWith(`${prefix}:`) === true);
  const mine = await clients();
  assert.equal(mine.length, 2, mine.map((c) => c.get("name")).join(", "));
  // Redis gives a connection a 16 KiB query buffer at every command and frees it ~2 s after the
  // last: a blocking fetch renewed every few seconds would hold it most of the time.
  await eventually(
    async () => (await clients()).some((c) => c.get("cmd") === "bzpopmin" && Number(c.get("idle")) >= 10),
    { what: "the blocking connection to stay idle 10 s", timeoutMs: 25_000 },
  );
  await queue.enqueue("webhook");
  // Well within the 30 s the idle fetch waits: the job itself wakes it.
  await eventually(() => passes === 2, { what: "a new job to wake the idle worker", timeoutMs: 10_000 });
});
