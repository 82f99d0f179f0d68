import { test } from "node:test";
import assert from "node:assert/strict";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, parseConfig } from "./config.ts";

const noSecret = (): string => {
  throw new Error("no such file");
};
/** The admin password every manager needs. */
const pw = { REDIS_PASSWORD: "admin-pw" };

test("defaults: process mode, metrics on 8080, no webhook, the default lease", () => {
  const config = parseConfig([], pw, noSecret);
  assert.equal(config.reconcilerMode, "process");
  assert.equal(config.metricsPort, 8080);
  assert.equal(config.webhookPort, undefined);
  assert.equal(config.leaseName, "driftless-manager");
  assert.equal(config.allowFileRepos, false);
  assert.equal(config.redisUrl, "redis://:admin-pw@127.0.0.1:6379");
  assert.equal(config.reconcilerRedisUrl, "redis://127.0.0.1:6379");
});

test("the default state folder is the user's own name in the temp folder, not one any local user may make first", () => {
  const uid = process.getuid?.();
  const own = uid === undefined ? "driftless-manager" : `driftless-manager-${uid}`;
  assert.equal(parseConfig([], pw, noSecret).stateDir, join(tmpdir(), own));
  assert.equal(parseConfig(["--state-dir", "/srv/driftless"], pw, noSecret).stateDir, "/srv/driftless");
});

test("flags win over environment variables", () => {
  const config = parseConfig(
    ["--reconciler-mode", "deployment", "--redis-url", "redis://flag:1"],
    { ...pw, RECONCILER_MODE: "process", REDIS_URL: "redis://env:1", KUBECONFIG: "/k" },
    noSecret,
  );
  assert.equal(config.reconcilerMode, "deployment");
  assert.equal(config.redisUrl, "redis://:admin-pw@flag:1");
  assert.equal(config.kubeconfig, "/k");
});

test("the webhook needs a secret file, read and trimmed; an empty one is refused", () => {
  assert.throws(() => parseConfig(["--webhook-port", "9000"], pw, noSecret), ConfigError);
  const config = parseConfig(["--webhook-port", "0", "--webhook-secret-file", "/s"], pw, () => "s3cret\n");
  assert.equal(config.webhookPort, 0);
  assert.equal(config.webhookSecret, "s3cret");
  assert.throws(
    () => parseConfig([], { ...pw, WEBHOOK_PORT: "9000", WEBHOOK_SECRET_FILE: "/s" }, () => " \n"),
    /empty/,
  );
  assert.throws(
    () => parseConfig([], { ...pw, WEBHOOK_PORT: "9000", WEBHOOK_SECRET_FILE: "/missing" }, noSecret),
    /missing/,
  );
});

test("malformed values are ConfigErrors naming the flag", () => {
  assert.throws(() => parseConfig(["--reconciler-mode", "pod"], pw, noSecret), /--reconciler-mode/);
  assert.throws(() => parseConfig(["--metrics-port", "http"], pw, noSecret), /--metrics-port/);
  assert.throws(() => parseConfig([], { ...pw, LOG_LEVEL: "loud" }, noSecret), /--log-level/);
  assert.throws(() => parseConfig(["--resync-period", "0"], pw, noSecret), /--resync-period/);
  assert.equal(parseConfig([], { ...pw, DRIFTLESS_ALLOW_FILE_REPOS: "true" }, noSecret).allowFileRepos, true);
});

test("the Redis password comes from REDIS_PASSWORD, never a flag, and is added to the URL", () => {
  const config = parseConfig([], { REDIS_URL: "redis://redis:6379", REDIS_PASSWORD: "p@ss/w:rd" }, noSecret);
  assert.equal(new URL(config.redisUrl).hostname, "redis");
  assert.equal(decodeURIComponent(new URL(config.redisUrl).password), "p@ss/w:rd");
  for (const flag of ["--redis-url", "--reconciler-redis-url"]) {
    assert.throws(
      () => parseConfig([flag, "redis://:hunter2@redis:6379"], pw, noSecret),
      (e: unknown) => e instanceof ConfigError && e.message.includes(flag) && !e.message.includes("hunter2"),
    );
  }
  // In the environment it is accepted (a Secret can hold the whole URL).
  assert.equal(
    parseConfig([], { REDIS_URL: "redis://:hunter2@redis:6379" }, noSecret).redisUrl.includes("hunter2"),
    true,
  );
  assert.throws(
    () => parseConfig([], { REDIS_URL: "hunter2" }, noSecret),
    (e: unknown) => e instanceof ConfigError && !e.message.includes("hunter2"),
  );
});

test("reconcilers get a Redis URL without credentials: each authenticates as its own ACL user", () => {
  const env = { RECONCILER_MODE: "deployment", REDIS_URL: "redis://redis:6379", REDIS_PASSWORD: "hunter2" };
  assert.equal(parseConfig([], env, noSecret).reconcilerRedisUrl, "redis://redis:6379");
  const own = parseConfig([], { ...env, RECONCILER_REDIS_URL: "rediss://driftless@queues.example:6380" }, noSecret);
  assert.equal(own.reconcilerRedisUrl, "rediss://queues.example:6380");
});

test("an empty or missing Redis password is refused at start, saying which variable", () => {
  for (const env of [{}, { REDIS_PASSWORD: "" }, { REDIS_URL: "redis://user@redis:6379", REDIS_PASSWORD: "" }]) {
    assert.throws(
      () => parseConfig([], env, noSecret),
      (e: unknown) => e instanceof ConfigError && e.message.includes("REDIS_PASSWORD is empty"),
    );
  }
});

test("admission protection is off unless a port is given; a URL needs the port and https", () => {
  assert.equal(parseConfig([], pw, noSecret).admissionWebhook, undefined);
  assert.deepEqual(parseConfig(["--admission-webhook-port", "0"], pw, noSecret).admissionWebhook, {
    port: 0,
    url: undefined,
  });
  assert.deepEqual(
    parseConfig(
      [],
      { ...pw, ADMISSION_WEBHOOK_PORT: "8443", ADMISSION_WEBHOOK_URL: "https://hooks.example:8443/admission-webhook" },
      noSecret,
    ).admissionWebhook,
    { port: 8443, url: "https://hooks.example:8443/admission-webhook" },
  );
  assert.throws(() => parseConfig(["--admission-webhook-port", "x"], pw, noSecret), /--admission-webhook-port/);
  assert.throws(
    () => parseConfig(["--admission-webhook-url", "https://h/p"], pw, noSecret),
    /needs --admission-webhook-port/,
  );
  assert.throws(
    () => parseConfig(["--admission-webhook-port", "1", "--admission-webhook-url", "http://h/p"], pw, noSecret),
    /https/,
  );
});

test("a RepoSync's shell in rendering is refused unless --allow-reposync-shell-in-rendering (or its variable) says so", () => {
  assert.equal(parseConfig([], pw, noSecret).allowRepoSyncShellInRendering, false);
  assert.equal(parseConfig(["--allow-reposync-shell-in-rendering"], pw, noSecret).allowRepoSyncShellInRendering, true);
  const fromEnv = parseConfig([], { ...pw, DRIFTLESS_ALLOW_REPOSYNC_SHELL_IN_RENDERING: "true" }, noSecret);
  assert.equal(fromEnv.allowRepoSyncShellInRendering, true);
});
