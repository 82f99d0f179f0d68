/**
 * Every reconciler authenticates to the run's real Redis as an ACL user of its own, created by the
 * manager: it reaches its own sync's queue and nothing else, runs no administrative command, and
 * its user goes with the sync. A user Redis lost is re-created. Neither process starts on an open Redis.
 */
import { spawn } from "node:child_process";
import { connect as connectSocket } from "node:net";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { findRepoRoot } from "@driftless/local-cluster";
import {
  closeRedisConnection,
  createRedisConnection,
  SyncQueue,
  syncQueueName,
  withRedisCredentials,
  type RedisConnection,
  type SyncRef,
} from "@driftless/queue";
import { eventually, suffix, testEnv } from "../../support/index.ts";
import {
  admin,
  configMap,
  createSync,
  getObject,
  Mapping,
  reconcilerPids,
  rootSyncObject,
  startManager,
  synced,
  systemNamespace,
  syncedRootSync,
  type RunningManager,
} from "./helpers.ts";

const SecretMapping = { group: "", version: "v1", kind: "Secret", resource: "secrets", namespaced: true, verbs: [] };

function connect(t: TestContext, url: string): RedisConnection {
  const connection = createRedisConnection(url, { role: "worker", log: () => undefined });
  t.after(() => closeRedisConnection(connection));
  return connection;
}

/** The run's Redis as its admin (the default user), for the test's own look. */
const adminRedis = (t: TestContext): RedisConnection => connect(t, testEnv().redisUrl);

/** How a sync's reconciler process reaches Redis (its environment), and the user and password the manager gave it. */
async function credentialOf(
  manager: RunningManager,
  name: string,
): Promise<{ url: string; username: string | undefined; password: string | undefined }> {
  const [pid] = await reconcilerPids(manager.scope, name);
  assert.ok(pid !== undefined, `no reconciler process for ${name}`);
  const environ = (await readFile(`/proc/${pid}/environ`, "utf8")).split("\0");
  const value = (key: string): string | undefined =>
    environ.find((e) => e.startsWith(`${key}=`))?.slice(key.length + 1);
  const username = value("REDIS_USERNAME");
  const password = value("REDIS_PASSWORD");
  const url = value("REDIS_URL") ?? "";
  return {
    url: username === undefined || password === undefined ? url : withRedisCredentials(url, username, password),
    username,
    password,
  };
}

const rootSync = (name: string): SyncRef => ({ kind: "RootSync", namespace: systemNamespace, name });

/** One RESP command as Redis reads it (an array of bulk strings). */
const resp = (...args: readonly string[]): string =>
  `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join("")}`;

/**
 * What a RESP3 client logged in as `username` hears, by broadcast tracking of `prefix` (CLIENT TRACKING
 * ... BCAST PREFIX), while `write` changes keys: the tracking command's reply, and every byte Redis sent
 * after it. ioredis speaks RESP2 only, so this is a raw socket. Each step waits for the echo of a PING
 * sent behind it: Redis queues broadcast invalidations before it answers the write, so they precede it.
 */
async function trackingAs(
  t: TestContext,
  username: string,
  password: string,
  prefix: string,
  write: () => Promise<unknown>,
): Promise<{ reply: string; heard: string }> {
  const { hostname, port } = new URL(testEnv().redisAddress);
  const socket = connectSocket(Number(port), hostname);
  t.after(() => socket.destroy());
  let received = "";
  const waiters: { marker: string; done: () => void }[] = [];
  socket.on("data", (chunk: Buffer) => {
    received += chunk.toString("utf8");
    for (const w of waiters.filter((w) => received.includes(w.marker))) w.done();
  });
  const echo = (marker: string): Promise<void> =>
    new Promise((resolve, reject) => {
      waiters.push({ marker, done: resolve });
      socket.once("error", reject);
      socket.write(resp("PING", marker));
    });
  socket.write(
    resp("AUTH", username, password) + resp("HELLO", "3") + resp("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", prefix),
  );
  await echo("tracking-asked");
  const reply = received;
  await write();
  await echo("written");
  return { reply, heard: received.slice(reply.length) };
}
const refused = /NOPERM|can't access/;

async function assertRefused(what: string, run: () => Promise<unknown>): Promise<void> {
  await assert.rejects(run, (e: unknown) => e instanceof Error && refused.test(e.message), `${what} was not refused`);
}

test("a reconciler's own Redis user reaches its sync's queue only, and no administrative command", async (t) => {
  const manager = await startManager(t);
  const [mine, theirs] = [
    await syncedRootSync(t, manager, { namespacePrefix: "acl", object: "cm" }),
    await syncedRootSync(t, manager, { namespacePrefix: "acl", object: "cm" }),
  ];
  const prefix = manager.scope.queuePrefix;
  const ownQueue = `${prefix}:${syncQueueName(rootSync(mine.name))}`;
  const otherQueue = `${prefix}:${syncQueueName(rootSync(theirs.name))}`;
  // Whatever the reconciler was given, used as a thief would.
  const credential = await credentialOf(manager, mine.name);
  const as = connect(t, credential.url);
  const look = adminRedis(t);

  // Its own queue: readable and writable.
  assert.ok(Object.keys(await as.hgetall(`${ownQueue}:meta`)).length > 0, "its own queue's meta is unreadable");
  await as.set(`${ownQueue}:probe`, "1");
  await as.del(`${ownQueue}:probe`);

  // Another sync's queue: not by raw commands, not in a script, not through BullMQ, not even its key names.
  await assertRefused("reading another sync's queue", () => as.hgetall(`${otherQueue}:meta`));
  await assertRefused("writing another sync's queue", () => as.set(`${otherQueue}:forged`, "x"));
  await assertRefused("deleting another sync's queue", () => as.del(`${otherQueue}:meta`));
  await assertRefused("the manager's queue", () => as.hgetall(`${prefix}:manager:meta`));
  await assertRefused("a script reading an undeclared key", () =>
    as.eval(`return redis.call('HGETALL', '${otherQueue}:meta')`, 1, `${ownQueue}:meta`),
  );
  await assertRefused("a script on another sync's key", () =>
    as.eval("return redis.call('DEL', KEYS[1])", 1, `${otherQueue}:meta`),
  );
  const forged = new SyncQueue({ sync: rootSync(theirs.name), connection: as, prefix, operationTimeoutMs: 5_000 });
  t.after(() => forged.close({ timeoutMs: 1_000 }));
  await assertRefused("enqueueing on another sync's queue", () => forged.enqueue("webhook"));
  await assertRefused("counting another sync's jobs", () => forged.depth());
  await assertRefused("obliterating another sync's queue", () => forged.obliterate());
  // Nor by broadcast tracking of its prefix: each change there would push the changed key's name.
  const leak = `${otherQueue}:tracked-${suffix()}`;
  const tracked = await trackingAs(t, credential.username ?? "", credential.password ?? "", `${otherQueue}:`, () =>
    look.set(leak, "1"),
  );
  assert.ok(!tracked.heard.includes(leak), `another sync's key name was pushed to the reconciler: ${leak}`);
  assert.match(tracked.reply, /NOPERM/, `CLIENT TRACKING BCAST PREFIX ${otherQueue}: was not refused`);
  await look.del(leak);
  for (const command of [
    ["KEYS", "*"],
    ["SCAN", "0"],
    ["RANDOMKEY"],
    ["DBSIZE"],
    ["MEMORY", "STATS"],
    ["SELECT", "1"],
  ]) {
    await assertRefused(command.join(" "), () => as.call(command[0] ?? "", ...command.slice(1)));
  }

  // Administrative commands, the destructive ones last (they would wreck the run's Redis if allowed).
  const administrative = [
    ["ACL", "LIST"],
    ["ACL", "SETUSER", ownQueue, "~*"],
    ["ACL", "DELUSER", `${otherQueue}`],
    ["CONFIG", "GET", "requirepass"],
    ["CONFIG", "SET", "maxmemory", "1"],
    ["CLIENT", "LIST"],
    ["CLIENT", "KILL", "ID", "1"],
    ["MONITOR"],
    ["SCRIPT", "FLUSH"],
    ["FUNCTION", "FLUSH"],
    ["DEBUG", "SLEEP", "0"],
    ["FLUSHDB"],
    ["FLUSHALL"],
    ["SHUTDOWN", "NOSAVE"],
  ];
  for (const [command, ...args] of administrative) {
    await assert.rejects(
      () => as.call(command ?? "", ...args),
      (e: unknown) => e instanceof Error && /NOPERM|DEBUG command not allowed/.test(e.message),
      `${command} ${args.join(" ")} was not refused`,
    );
  }
  assert.ok(Object.keys(await look.hgetall(`${otherQueue}:meta`)).length > 0, "the other sync's queue is gone");
  assert.equal(await look.exists(`${otherQueue}:forged`), 0, "a job key was forged");
  assert.equal(await as.call("ACL", "WHOAMI"), ownQueue, "the user is not named after the sync's queue");
  assert.notEqual(credential.password, testEnv().redisPassword, "the reconciler holds the admin password");

  // Refused all along, the reconciler still syncs under its own user.
  await mine.repo.write("cm2.yaml", configMap("cm2", mine.target, { round: "1" }));
  await synced("RootSync", systemNamespace, mine.name, await mine.repo.commit("a second object"), 60_000);
});

test("a reconciler's Redis user deleted by hand is re-created by the manager and the sync recovers; it goes with the sync", async (t) => {
  const manager = await startManager(t);
  const { name, repo, target } = await syncedRootSync(t, manager, { namespacePrefix: "acl", object: "cm" });
  const look = adminRedis(t);
  const { username } = await credentialOf(manager, name);
  assert.ok(username !== undefined, "the reconciler got no Redis user of its own");
  const users = async (): Promise<string[]> => (await look.call("ACL", "USERS")) as string[];
  assert.ok((await users()).includes(username), "the manager created no user for the reconciler");

  // As after a Redis restart (no persistence): the user is gone, and its connections with it.
  assert.equal(await look.call("ACL", "DELUSER", username), 1);
  await eventually(async () => (await users()).includes(username), {
    what: "the manager to re-create the reconciler's user",
    timeoutMs: 30_000,
  });
  await repo.write("cm2.yaml", configMap("cm2", target, { round: "1" }));
  await synced("RootSync", systemNamespace, name, await repo.commit("after the user was lost"), 90_000);

  await (await admin()).delete(Mapping.RootSync, systemNamespace, name);
  await eventually(async () => !(await users()).includes(username), {
    what: "the user deleted with its sync",
    timeoutMs: 30_000,
  });
});

test("deployment mode: each reconciler reads its own Redis user from a Secret of its own, rotated with its pod and deleted with it", async (t) => {
  const manager = await startManager(t, { mode: "deployment" });
  const name = `root-${suffix()}`;
  const reconciler = `root-reconciler-${name}`;
  const git = { repo: "https://example.invalid/config.git", branch: "main" };
  await createSync(t, rootSyncObject(name, manager.scope, git));
  const secretOf = async (): Promise<Record<string, string> | undefined> => {
    const secret = await getObject(SecretMapping, systemNamespace, `${reconciler}-redis`);
    const data = secret?.["data"] as Record<string, string> | undefined;
    return data === undefined
      ? undefined
      : Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]));
  };
  const first = await eventually(secretOf, { what: `Secret ${reconciler}-redis` });
  // Read until present: the manager may be rewriting it (a rotation) at the moment of a single read.
  const secret = await eventually(() => getObject(SecretMapping, systemNamespace, `${reconciler}-redis`), {
    what: `Secret ${reconciler}-redis read back`,
  });
  assert.equal(
    secret.metadata.labels?.["configsync.gke.io/sync-name"],
    name,
    "the Secret is not labelled as the sync's",
  );
  const deployment = await eventually(() => getObject(Mapping.Deployment, systemNamespace, reconciler), {
    what: `Deployment ${reconciler}`,
  });
  const text = JSON.stringify(deployment);
  assert.ok(!text.includes(first["password"] ?? "?") && !text.includes(testEnv().redisPassword));
  const env = (
    (deployment?.["spec"] as { template: { spec: { containers: { env: Record<string, unknown>[] }[] } } }).template.spec
      .containers[0]?.env ?? []
  ).filter((e) => String(e["name"]).startsWith("REDIS_"));
  assert.deepEqual(env, [
    { name: "REDIS_URL", value: testEnv().redisAddress },
    { name: "REDIS_USERNAME", valueFrom: { secretKeyRef: { name: `${reconciler}-redis`, key: "username" } } },
    { name: "REDIS_PASSWORD", valueFrom: { secretKeyRef: { name: `${reconciler}-redis`, key: "password" } } },
  ]);
  const queue = `${manager.scope.queuePrefix}:${syncQueueName(rootSync(name))}`;
  assert.equal(first["username"], queue);
  const firstLogin = connect(t, withRedisCredentials(testEnv().redisAddress, queue, first["password"] ?? ""));
  await firstLogin.set(`${queue}:probe`, "1");
  await assertRefused("another queue", () => firstLogin.get(`${manager.scope.queuePrefix}:manager:meta`));

  // A spec change replaces the pod: a new password, the old one still valid for the pod being replaced.
  await (await admin()).patch(Mapping.RootSync, systemNamespace, name, { spec: { git: { dir: "other" } } }, "merge");
  const second = await eventually(
    async () => {
      const now = await secretOf();
      return now !== undefined && now["password"] !== first["password"] ? now : undefined;
    },
    { what: "the password rotated" },
  );
  const secondLogin = connect(t, withRedisCredentials(testEnv().redisAddress, queue, second["password"] ?? ""));
  assert.equal(await secondLogin.get(`${queue}:probe`), "1");
  await firstLogin.ping();

  // The spec back as it was: another new password, never the first one again (a leaked one stays dead).
  await (await admin()).patch(Mapping.RootSync, systemNamespace, name, { spec: { git: { dir: null } } }, "merge");
  const third = await eventually(
    async () => {
      const now = await secretOf();
      return now !== undefined && now["password"] !== second["password"] ? now : undefined;
    },
    { what: "the password rotated again" },
  );
  assert.notEqual(third["password"], first["password"], "the spec's earlier password came back");

  await (await admin()).delete(Mapping.RootSync, systemNamespace, name);
  await eventually(async () => (await secretOf()) === undefined, { what: "the Secret deleted with the sync" });
  const look = adminRedis(t);
  await eventually(async () => !((await look.call("ACL", "USERS")) as string[]).includes(queue), {
    what: "the user deleted with the sync",
  });
});

const repoRoot = findRepoRoot();

/**
 * Runs an app's main.ts with `env` on top of a clean one; resolves with its exit code and output.
 * One still running after 20 s started when it should not have: it is killed, and reported as such.
 */
function runApp(app: string, args: readonly string[], env: Record<string, string>): Promise<[number, string]> {
  const child = spawn(process.execPath, [join(repoRoot, "apps", app, "src", "main.ts"), ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: process.env["PATH"] ?? "", ...env },
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const started = setTimeout(() => {
    output += "\n(still running after 20 s: killed)";
    child.kill("SIGKILL");
  }, 20_000);
  return new Promise((resolve) =>
    // On 'close', not 'exit': 'exit' may come before the pipes are drained.
    child.once("close", (code) => {
      clearTimeout(started);
      resolve([code ?? -1, output]);
    }),
  );
}

test("neither the manager nor a reconciler starts without a Redis password", async () => {
  const redis = { REDIS_URL: testEnv().redisAddress, REDIS_PASSWORD: "" };
  const [managerCode, managerOutput] = await runApp("manager", ["--kubeconfig", testEnv().kubeconfig], redis);
  assert.equal(managerCode, 2, managerOutput);
  assert.match(managerOutput, /REDIS_PASSWORD is empty/);
  const sync = ["--sync-kind", "RootSync", "--sync-name", "root-sync", "--sync-namespace", systemNamespace];
  const [reconcilerCode, reconcilerOutput] = await runApp("reconciler", sync, { ...redis, REDIS_USERNAME: "u" });
  assert.equal(reconcilerCode, 2, reconcilerOutput);
  assert.match(reconcilerOutput, /REDIS_PASSWORD is empty/);
});
