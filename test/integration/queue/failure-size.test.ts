/**
 * A failing pass must not be able to fill Redis: whatever a processor throws, what BullMQ stores
 * for the failure (the job's failedReason and stacktrace, the events stream entry) stays small.
 * Found with a source whose duplicate-object error listed 2,000 long paths: a 6.5 MB message, ~21 MB
 * of Redis per failed job, and OOM for every queue after a dozen failures.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { Queue } from "bullmq";
import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import { SyncQueue, type JobOutcome, type RedisConnection } from "@driftless/queue";
import { eventually } from "../../support/index.ts";
import { testConnection, testPrefix, testSync } from "./helpers.ts";

/** What one failed job may cost in Redis, all of the queue's keys together. */
const BUDGET_PER_FAILED_JOB = 64 * 1024;
/** The longest failedReason accepted: 4 KiB and the truncation marker. */
const MAX_REASON = 4 * 1024 + 200;

/** A message like KNV1029's for thousands of long-pathed files: ~4 MB. */
function hugeMessage(): string {
  const paths = Array.from({ length: 1_300 }, (_, i) => `    ${"deep/".repeat(600)}configmap-${i}.yaml`);
  return `duplicate objects declared:\n${paths.join("\n")}`;
}

function hugeError(errorClass: ErrorClass): DriftlessError {
  return new DriftlessError({ code: KnvCode.MetadataNameCollision, errorClass, message: hugeMessage() });
}

/** Exact bytes Redis uses for every key under the prefix (job hashes, sets, the events stream). */
async function keyBytes(connection: RedisConnection, pattern: string): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  let cursor = "0";
  do {
    const [next, keys] = await connection.scan(cursor, "MATCH", pattern, "COUNT", 1_000);
    cursor = next;
    for (const key of keys) {
      const bytes = (await connection.call("MEMORY", "USAGE", key, "SAMPLES", "0")) as number | null;
      sizes.set(key, bytes ?? 0);
    }
  } while (cursor !== "0");
  return sizes;
}

async function runToFinalFailure(
  t: TestContext,
  errorClass: ErrorClass,
  jobs: number,
): Promise<{ queue: SyncQueue; connection: RedisConnection; prefix: string; outcomes: JobOutcome[] }> {
  const connection = testConnection(t);
  const prefix = testPrefix();
  const outcomes: JobOutcome[] = [];
  const queue = new SyncQueue({
    sync: testSync(),
    connection,
    prefix,
    retry: { attempts: 3, backoffMs: 10, jitter: 0 },
    hooks: { onJobDone: (o) => outcomes.push(o) },
  });
  t.after(() => queue.close());
  queue.worker(async () => {
    throw hugeError(errorClass);
  });
  const attemptsPerJob = errorClass === ErrorClass.Terminal ? 1 : 3;
  for (let i = 1; i <= jobs; i++) {
    await queue.enqueue("poll");
    await eventually(async () => outcomes.length === i * attemptsPerJob && (await queue.depth()).total === 0, {
      what: `job ${i} to fail for good`,
      timeoutMs: 30_000,
    });
  }
  return { queue, connection, prefix, outcomes };
}

async function assertBounded(
  t: TestContext,
  run: Awaited<ReturnType<typeof runToFinalFailure>>,
  jobs: number,
): Promise<string[]> {
  const { queue, connection, prefix, outcomes } = run;
  const inspector = new Queue(queue.name, { connection, prefix });
  t.after(() => inspector.close());
  const sizes = await keyBytes(connection, `${prefix}:${queue.name}:*`);
  const total = [...sizes.values()].reduce((sum, bytes) => sum + bytes, 0);
  const largest = [...sizes].sort((a, b) => b[1] - a[1]).slice(0, 3);
  t.diagnostic(`${total} bytes in Redis for ${jobs} failed job(s)`);
  assert.ok(
    total <= jobs * BUDGET_PER_FAILED_JOB,
    `the queue holds ${total} bytes in Redis after ${jobs} failed jobs (largest: ${JSON.stringify(largest)}), ` +
      `expected at most ${BUDGET_PER_FAILED_JOB} per failed job`,
  );
  const events = sizes.get(`${prefix}:${queue.name}:events`) ?? 0;
  assert.ok(events <= BUDGET_PER_FAILED_JOB, `the events stream holds ${events} bytes`);
  const failed = await inspector.getFailed();
  assert.equal(failed.length, jobs, "every job must have ended failed");
  const reasons: string[] = [];
  for (const job of failed) {
    assert.ok(
      job.failedReason.length <= MAX_REASON,
      `failedReason of job ${job.id} is ${job.failedReason.length} characters, expected at most ${MAX_REASON}`,
    );
    assert.deepEqual(job.stacktrace, [], `job ${job.id} must store no stack trace`);
    reasons.push(job.failedReason);
  }
  // The processor's hook still sees the whole error (logs and status truncate on their own).
  assert.ok((outcomes[0]?.error?.message.length ?? 0) > 1_000_000);

  return reasons;
}

test("a retried error with a multi-megabyte message is stored bounded, without a stack trace", async (t) => {
  const run = await runToFinalFailure(t, ErrorClass.Retry, 1);
  const [reason = ""] = await assertBounded(t, run, 1);
  assert.match(reason, /^duplicate objects declared:\n/);
  assert.match(reason, /truncated/);
});

test("terminal errors with multi-megabyte messages stay bounded in Redis across many failed jobs", async (t) => {
  const run = await runToFinalFailure(t, ErrorClass.Terminal, 5);
  const reasons = await assertBounded(t, run, 5);
  for (const reason of reasons) {
    assert.match(reason, /^KNV1029: duplicate objects declared:\n/);
    assert.match(reason, /truncated/);
  }
});
