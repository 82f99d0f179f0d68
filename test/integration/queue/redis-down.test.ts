import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import { closeRedisConnection, createRedisConnection, QueueUnavailableError, SyncQueue } from "@driftless/queue";
import { eventually } from "../../support/index.ts";
import { testPrefix, testSync } from "./helpers.ts";

const SECRET = "s3cret-Passw0rd";

/** A loopback port nothing listens on (it was free a moment ago; nothing in this test binds it). */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** A redis-server of this test's own on `port`, so the test can stop and restart it. */
async function ownRedis(t: TestContext, port: number, dir: string): Promise<ChildProcess> {
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
    { stdio: "ignore" },
  );
  t.after(() => {
    child.kill("SIGKILL");
  });
  const probe = createRedisConnection(`redis://127.0.0.1:${port}`, { log: () => undefined });
  try {
    await eventually(async () => (await probe.ping()) === "PONG", { what: `redis-server on ${port}` });
  } finally {
    await closeRedisConnection(probe);
  }
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGKILL");
  await exited;
}

test("enqueue rejects within its deadline with a retry-class error when nothing listens, never showing the password", async (t) => {
  const port = await deadPort();
  const logs: string[] = [];
  const connection = createRedisConnection(`redis://:${SECRET}@127.0.0.1:${port}`, { log: (line) => logs.push(line) });
  t.after(() => closeRedisConnection(connection));
  const queue = new SyncQueue({ sync: testSync(), connection, prefix: testPrefix(), operationTimeoutMs: 1_000 });
  t.after(() => queue.close());

  const started = performance.now();
  const error = await queue.enqueue("poll").then(
    () => assert.fail("enqueue succeeded without Redis"),
    (e: unknown) => e,
  );
  const elapsed = performance.now() - started;

  assert.ok(elapsed < 3_000, `enqueue took ${elapsed} ms to fail`);
  assert.ok(error instanceof QueueUnavailableError);
  assert.ok(error instanceof DriftlessError);
  assert.equal(error.errorClass, ErrorClass.Retry);
  assert.equal(error.code, KnvCode.Internal);
  assert.equal(error.retryable, true);
  assert.match(error.message, new RegExp(`127\\.0\\.0\\.1:${port}`));
  assert.doesNotMatch(error.message, new RegExp(SECRET));
  await assert.rejects(queue.depth(), QueueUnavailableError);

  await eventually(() => logs.length > 0, { what: "the outage to be logged" });
  assert.ok(
    logs.every((line) => !line.includes(SECRET)),
    `a log line shows the password: ${logs.join("\n")}`,
  );
  assert.equal(logs.length, 1, "an outage is logged once, not per reconnect attempt");
});

test("once Redis goes away, enqueue rejects at once; a worker waits and resumes when Redis is back", async (t) => {
  const port = await deadPort();
  const dir = await mkdtemp(join(tmpdir(), "driftless-redis-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  let server = await ownRedis(t, port, dir);
  const logs: string[] = [];
  const connection = createRedisConnection(`redis://127.0.0.1:${port}`, {
    log: (line) => logs.push(line),
    maxReconnectDelayMs: 200,
  });
  t.after(() => closeRedisConnection(connection));
  const queue = new SyncQueue({ sync: testSync(), connection, prefix: testPrefix(), operationTimeoutMs: 2_000 });
  t.after(() => queue.close({ timeoutMs: 1_000 }));
  const triggers: string[] = [];
  queue.worker(async (job) => {
    triggers.push(job.data.trigger);
  });
  await queue.workerReady();
  await queue.enqueue("startup");
  await eventually(() => triggers.length === 1, { what: "the first pass" });

  await stop(server);
  await eventually(() => connection.status !== "ready", { what: "the connection to notice" });
  const started = performance.now();
  const error = await queue.enqueue("poll").then(
    () => assert.fail("enqueue succeeded without Redis"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof QueueUnavailableError, String(error));
  assert.ok(performance.now() - started < 1_000, "enqueue waited for a reconnect instead of failing fast");

  server = await ownRedis(t, port, dir);
  await eventually(() => connection.status === "ready", { what: "the producer to reconnect", timeoutMs: 15_000 });
  await queue.enqueue("webhook");
  await eventually(() => triggers.length === 2, { what: "the worker to resume", timeoutMs: 30_000 });
  assert.deepEqual(triggers, ["startup", "webhook"]);
  assert.ok(
    logs.some((line) => line.includes("connected again")),
    logs.join("\n"),
  );
});
