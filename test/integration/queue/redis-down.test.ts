import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import { isAlive, startRedis, stopProcess, type RedisServer } from "@driftless/local-cluster";
import {
  closeRedisConnection,
  createRedisConnection,
  QueueUnavailableError,
  RedisRole,
  SyncQueue,
  syncQueueName,
  withRedisPassword,
  type RedisConnection,
} from "@driftless/queue";
import {
  createRootSync,
  eventually,
  rootSyncNamespace,
  startReconciler,
  suffix,
  TestRepo,
  quietly,
  removeAfter,
  removeQuietly,
} from "../../support/index.ts";
import {
  admin,
  conditionOf,
  configMap,
  createNamespace,
  createSync,
  getSync,
  Mapping,
  reconcilerLog,
  reconcilerPids,
  rootSyncObject,
  startManager,
  synced,
  systemNamespace,
  syncedRootSync,
  type RunningManager,
} from "../manager/helpers.ts";
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

// A producer connection (the worker gets a twin), and a worker-role one the worker shares (a reconciler's).
for (const role of [RedisRole.Producer, RedisRole.Worker]) {
  test(`once Redis goes away, enqueue rejects at once; a worker waits and resumes when Redis is back (${role} connection)`, async (t) => {
    const port = await deadPort();
    const dir = await mkdtemp(join(tmpdir(), "driftless-redis-"));
    removeAfter(t, dir);
    let server = await ownRedis(t, port, dir);
    const logs: string[] = [];
    const connection = createRedisConnection(`redis://127.0.0.1:${port}`, {
      role,
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
}

// ---------------------------------------------------------------------------------------------
// A real manager and reconciler on a password-protected Redis of the test's own.

/** Characters that must be percent-encoded in a URL, so both forms are looked for. */
const PASSWORD = `pw-${randomBytes(8).toString("hex")}:/@%?#`;
const passwordForms = [PASSWORD, encodeURIComponent(PASSWORD)];
const showsPassword = (text: string): boolean => passwordForms.some((form) => text.includes(form));
const objectCount = 300;

/** A redis-server requiring PASSWORD; managerOn stops it, after the manager has cleaned up. */
async function passwordRedis(port?: number): Promise<RedisServer> {
  const dir = await mkdtemp(join(tmpdir(), "driftless-redis-auth-"));
  return startRedis({ dir, detached: false, password: PASSWORD, ...(port === undefined ? {} : { port }) });
}

/**
 * A manager on the Redis `current()` returns, given the password the way a pod is: inside REDIS_URL
 * (a Secret holding the whole URL) or in REDIS_PASSWORD (manifests/manager.yaml). Redis stops after
 * the manager's own clean-up, which deletes syncs through their reconcilers (after hooks run in
 * the order they were added).
 */
async function managerOn(
  t: TestContext,
  current: () => RedisServer,
  form: "url" | "REDIS_PASSWORD",
): Promise<RunningManager> {
  const { url } = current();
  const manager = await startManager(t, {
    redis: form === "url" ? { url: withRedisPassword(url, PASSWORD) } : { url, password: PASSWORD },
  });
  t.after(async () => {
    const server = current();
    await quietly("stopping redis-server", () => stopProcess(server.process.pid));
    await removeQuietly(dirname(server.process.logFile));
  });
  return manager;
}

/** The password is on no command line (`ps`) and in no log of the manager or the sync's reconciler. */
async function assertPasswordHidden(manager: RunningManager, syncName: string): Promise<number[]> {
  const children = await reconcilerPids(manager.scope, syncName);
  assert.equal(children.length, 1, "one reconciler process");
  for (const pid of [manager.pid, ...children]) {
    const cmdline = (await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0").join(" ");
    assert.ok(!showsPassword(cmdline), `pid ${pid} shows the password in ps: ${cmdline}`);
  }
  assert.ok(!showsPassword(manager.logs.join("\n")), "the manager logged the password");
  const log = await reconcilerLog(manager.scope, `root-reconciler-${syncName}`);
  assert.ok(!showsPassword(log), "the reconciler logged the password");
  return children;
}

async function killRedis(server: RedisServer): Promise<void> {
  process.kill(server.process.pid, "SIGKILL");
  await eventually(() => !isAlive(server.process.pid), { what: "redis-server gone" });
  await rm(dirname(server.process.logFile), { recursive: true, force: true });
}

/** An authenticated connection for the test's own look into Redis. */
function inspector(t: TestContext, server: RedisServer): RedisConnection {
  const connection = createRedisConnection(withRedisPassword(server.url, PASSWORD), {
    role: "worker",
    log: () => undefined,
  });
  t.after(() => closeRedisConnection(connection));
  return connection;
}

/** Pushes `objectCount` ConfigMaps and resolves once the reconciler has begun that pass. */
async function pushAndWaitMidPass(name: string, target: string, repo: TestRepo, round: string): Promise<string> {
  for (let i = 0; i < objectCount; i++) await repo.write(`cm-${i}.yaml`, configMap(`cm-${i}`, target, { round }));
  const commit = await repo.commit(`round ${round}`);
  await eventually(
    async () => {
      const syncing = conditionOf(await getSync("RootSync", systemNamespace, name), "Syncing");
      return syncing?.status === "True" && syncing.commit === commit;
    },
    { what: `the pass on round ${round} begun`, intervalMs: 20, timeoutMs: 60_000 },
  );
  return commit;
}

async function convergesAfter(name: string, target: string, repo: TestRepo, round: string): Promise<void> {
  await repo.write("cm-0.yaml", configMap("cm-0", target, { round }));
  const commit = await repo.commit(`round ${round}, pushed after the outage`);
  await synced("RootSync", systemNamespace, name, commit, 90_000);
  const client = await admin();
  const configMaps = (await client.list(Mapping.ConfigMap, { namespace: target })).items.filter((c) =>
    c.metadata.name.startsWith("cm-"),
  );
  assert.equal(configMaps.length, objectCount, "an object of the interrupted pass is missing");
  const first = configMaps.find((c) => c.metadata.name === "cm-0");
  assert.equal((first?.["data"] as Record<string, string> | undefined)?.["round"], round);
}

/** A sync created now gets a reconciler and syncs: the manager's own queue works. */
async function managerStillServes(t: TestContext, manager: RunningManager): Promise<void> {
  const target = await createNamespace(t, "redis-new");
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("fresh", target, { created: "after" }));
  const commit = await repo.commit("a new sync");
  const name = `root-${suffix()}`;
  await createSync(t, rootSyncObject(name, manager.scope, { repo: repo.url, branch: repo.branch, period: "2s" }));
  await synced("RootSync", systemNamespace, name, commit, 90_000);
}

test("a manager given a Redis URL with its password in the environment keeps it off every command line (ps) and out of the logs", async (t) => {
  const redis = await passwordRedis();
  assert.match(await rawReply(redis.port, "SET k v"), /^-NOAUTH/, "the Redis of this test takes no password");
  const manager = await managerOn(t, () => redis, "url");
  const { name } = await syncedRootSync(t, manager, { namespacePrefix: "redis", object: "cm-0" });

  const [child] = await assertPasswordHidden(manager, name);
  // The reconciler never has the admin password: its own user and password, from the manager, in its environment.
  const environ = (await readFile(`/proc/${child}/environ`, "utf8")).split("\0");
  assert.ok(!environ.some(showsPassword), "the reconciler's environment holds the admin password");
  const value = (key: string): string => environ.find((e) => e.startsWith(`${key}=`))?.slice(key.length + 1) ?? "";
  assert.equal(new URL(value("REDIS_URL")).password, "");
  const sync = { kind: "RootSync", namespace: systemNamespace, name } as const;
  assert.equal(value("REDIS_USERNAME"), `${manager.scope.queuePrefix}:${syncQueueName(sync)}`);
  assert.match(value("REDIS_PASSWORD"), /^[0-9a-f]{64}$/);
});

test("Redis killed and restarted mid-pass: nothing is lost, the sync converges to a commit pushed after, and the manager serves new syncs", async (t) => {
  let redis = await passwordRedis();
  const manager = await managerOn(t, () => redis, "REDIS_PASSWORD");
  const look = inspector(t, redis);
  const { name, target, repo } = await syncedRootSync(t, manager, { namespacePrefix: "redis", object: "cm-0" });
  const queue = `${manager.scope.queuePrefix}:${syncQueueName({ kind: "RootSync", namespace: systemNamespace, name })}`;

  await pushAndWaitMidPass(name, target, repo, "1");
  assert.equal(await look.llen(`${queue}:active`), 1, "no pass running");
  await killRedis(redis);
  redis = await passwordRedis(redis.port);
  // Persistence is off: the restarted Redis is empty, as after a pod replacement.
  await eventually(async () => (await look.exists(`${queue}:meta`)) === 1, {
    what: "the sync's queue back in the new Redis",
    timeoutMs: 60_000,
  });

  await convergesAfter(name, target, repo, "2");
  await managerStillServes(t, manager);
  await assertPasswordHidden(manager, name);
  assert.ok(
    manager.logs.some((line) => line.includes("connected again")),
    "the manager's outage was not reported",
  );
});

test("FLUSHALL mid-pass: the queues are rebuilt level-triggered, the sync converges to a commit pushed after, and the manager serves new syncs", async (t) => {
  const redis = await passwordRedis();
  const manager = await managerOn(t, () => redis, "REDIS_PASSWORD");
  const look = inspector(t, redis);
  const { name, target, repo } = await syncedRootSync(t, manager, { namespacePrefix: "redis", object: "cm-0" });
  const queue = `${manager.scope.queuePrefix}:${syncQueueName({ kind: "RootSync", namespace: systemNamespace, name })}`;

  await pushAndWaitMidPass(name, target, repo, "1");
  // In one transaction: the pass was running when everything went.
  const replies = await look.multi().llen(`${queue}:active`).flushall().exec();
  assert.deepEqual(replies, [
    [null, 1],
    [null, "OK"],
  ]);

  await convergesAfter(name, target, repo, "2");
  assert.equal(await look.exists(`${queue}:meta`), 1, "the sync's queue was not re-created");
  await managerStillServes(t, manager);
  await assertPasswordHidden(manager, name);
});

test("a sync created while Redis is down gets its reconciler as soon as Redis is back, not at the next resync", async (t) => {
  let redis = await passwordRedis();
  const manager = await managerOn(t, () => redis, "REDIS_PASSWORD");
  await eventually(() => manager.isLeader(), { what: "the manager to lead" });
  await killRedis(redis);

  const target = await createNamespace(t, "redis-down");
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("created-during-outage", target, { redis: "down" }));
  const commit = await repo.commit("a sync created while Redis is down");
  const name = `root-${suffix()}`;
  await createSync(t, rootSyncObject(name, manager.scope, { repo: repo.url, branch: repo.branch, period: "2s" }));
  await eventually(
    () => manager.logs.some((line) => line.includes("could not enqueue a manager job") && line.includes(name)),
    { what: "the manager's enqueue for the new sync to fail" },
  );
  redis = await passwordRedis(redis.port);
  // The resync period is 5 minutes: only a resync on reconnect gets there in time.
  await synced("RootSync", systemNamespace, name, commit, 60_000);
});

/** One inline command on a fresh connection, and the first line of the reply. */
function rawReply(port: number, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: "127.0.0.1", port }, () => socket.write(`${command}\r\n`));
    socket.once("data", (data) => {
      socket.destroy();
      resolve(data.toString().split("\r\n")[0] ?? "");
    });
    socket.once("error", reject);
  });
}

test("a reconciler stops promptly while Redis is away, with commands waiting on its connection", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "driftless-redis-stop-"));
  removeAfter(t, dir);
  const port = await deadPort();
  const redis = await ownRedis(t, port, dir);
  const name = `redis-stop-${suffix()}`;
  const repo = await TestRepo.create(t);
  await repo.write("config/ns.yaml", JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name } }));
  await repo.commit("one namespace");
  await createRootSync(name, repo);
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { redisUrl: `redis://127.0.0.1:${port}` },
  );
  await eventually(() => reconciler.passCount > 0, { what: "a first pass" });
  await stop(redis);
  // The worker's periodic commands (stalled-job checks) wait on the shared connection while Redis is away.
  const connection = (reconciler as unknown as { parts: { redis: { offlineQueue: { length: number } } } }).parts.redis;
  await eventually(() => connection.offlineQueue.length > 0, {
    what: "a command waiting for Redis",
    timeoutMs: 30_000,
  });
  const stopped = await Promise.race([
    reconciler.stop(5_000).then(() => "stopped" as const),
    new Promise<"hung">((resolve) => setTimeout(() => resolve("hung"), 30_000).unref()),
  ]);
  assert.equal(stopped, "stopped", "stop() did not return while Redis was away");
});
