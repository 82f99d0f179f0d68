/**
 * A reconciler whose Redis goes away keeps syncing: the passes its queue cannot take run in its own process,
 * one at a time with the queue's jobs, and it says so in its JSON log (at warn, the URL masked) until the
 * queue takes them again.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { isAlive, startRedis, stopProcess, type RedisServer } from "@driftless/local-cluster";
import { withRedisPassword } from "@driftless/queue";
import { createLogger } from "@driftless/sync";
import {
  checkAfterCleanUp,
  createRootSync,
  eventually,
  rootSynced,
  rootSyncNamespace,
  startReconciler,
  suffix,
  TestRepo,
  removeQuietly,
} from "../../support/index.ts";

const PASSWORD = `pw-${suffix()}${suffix()}`;

interface LogLine {
  readonly level: string;
  readonly msg: string;
  readonly [field: string]: unknown;
}

/** A redis-server of this test's own (on `port` to come back where its clients expect it), stopped at the end. */
async function ownRedis(t: TestContext, port?: number): Promise<RedisServer> {
  const dir = await mkdtemp(join(tmpdir(), "driftless-redis-outage-"));
  const server = await startRedis({
    dir,
    detached: false,
    password: PASSWORD,
    ...(port === undefined ? {} : { port }),
  });
  t.after(async () => {
    if (isAlive(server.process.pid)) await stopProcess(server.process.pid);
    await removeQuietly(dir);
  });
  return server;
}

async function stopRedis(server: RedisServer): Promise<void> {
  process.kill(server.process.pid, "SIGKILL");
  await eventually(() => !isAlive(server.process.pid), { what: "redis-server gone" });
}

/** A reconciler on `server` whose JSON log lines the test reads. */
async function reconcilerOn(t: TestContext, name: string, server: RedisServer) {
  const lines: LogLine[] = [];
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    {
      redisUrl: withRedisPassword(server.url, PASSWORD),
      log: createLogger(
        { sync: `RootSync/${rootSyncNamespace}/${name}` },
        { level: "debug", write: (line) => void lines.push(JSON.parse(line) as LogLine) },
      ),
    },
  );
  const logged = (level: string, text: string): Promise<LogLine> =>
    eventually(() => lines.find((l) => l.level === level && JSON.stringify(l).includes(text)), {
      what: `a ${level} log line with "${text}"`,
      timeoutMs: 30_000,
    });
  // Last, so a failure skips no clean-up: the Redis restarted later in the test is still stopped.
  checkAfterCleanUp(t, () => {
    const shown = lines.filter((l) => JSON.stringify(l).includes(PASSWORD));
    assert.deepEqual(shown, [], "a log line shows the Redis password");
  });
  return { reconciler, lines, logged };
}

async function configMapRepo(t: TestContext, name: string): Promise<{ repo: TestRepo; commit: string }> {
  const repo = await TestRepo.create(t);
  const commit = await pushConfigMap(repo, name, "1");
  return { repo, commit };
}

async function pushConfigMap(repo: TestRepo, name: string, round: string): Promise<string> {
  await repo.write(
    "config/cm.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" }, data: { round } }),
  );
  return repo.commit(`round ${round}`);
}

test("Redis stopped under a running reconciler: a commit pushed during the outage is synced in-process, logged at warn, and passes go through the queue again once Redis is back", async (t) => {
  const name = `redis-outage-${suffix()}`;
  const redis = await ownRedis(t);
  const { repo, commit } = await configMapRepo(t, name);
  await createRootSync(name, repo);
  const { reconciler, logged } = await reconcilerOn(t, name, redis);
  await rootSynced(name, commit);

  await stopRedis(redis);
  // The connection's outage, in the sync's JSON log at warn with the error, not a bare line on stderr.
  const outage = await logged("warn", "reconnecting with backoff");
  assert.equal(outage["sync"], `RootSync/${rootSyncNamespace}/${name}`);
  assert.match(
    outage.msg,
    new RegExp(`^redis redis://\\*\\*\\*@127\\.0\\.0\\.1:${redis.port}: .+; reconnecting with backoff$`),
  );
  const pushed = await pushConfigMap(repo, name, "2");
  await rootSynced(name, pushed);
  const bypass = await logged("warn", "queue unavailable: running passes in this process");
  assert.match(String(bypass["error"]), /Redis at redis:\/\/\*\*\*@127\.0\.0\.1:\d+ is unavailable/);
  assert.equal(reconciler.bypassingQueue, true);

  await ownRedis(t, redis.port);
  await logged("warn", "connected again");
  await logged("info", "queue available again: passes run through it");
  const after = await pushConfigMap(repo, name, "3");
  await rootSynced(name, after);
  assert.equal(reconciler.bypassingQueue, false);
});

test("Redis down when a reconciler starts: the sync is synced in-process, and the queue takes over when Redis comes", async (t) => {
  const name = `redis-late-${suffix()}`;
  const redis = await ownRedis(t);
  await stopRedis(redis);
  const { repo, commit } = await configMapRepo(t, name);
  await createRootSync(name, repo);
  const { reconciler, logged } = await reconcilerOn(t, name, redis);

  await rootSynced(name, commit);
  await logged("warn", "queue unavailable: running passes in this process");
  assert.equal(reconciler.bypassingQueue, true);

  await ownRedis(t, redis.port);
  await logged("info", "queue available again: passes run through it");
  const after = await pushConfigMap(repo, name, "2");
  await rootSynced(name, after);
});
