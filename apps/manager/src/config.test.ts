import { test } from "node:test";
import assert from "node:assert/strict";
import { ConfigError, parseConfig } from "./config.ts";

const noSecret = (): string => {
  throw new Error("no such file");
};

test("defaults: process mode, metrics on 8080, no webhook, the default lease", () => {
  const config = parseConfig([], {}, noSecret);
  assert.equal(config.reconcilerMode, "process");
  assert.equal(config.metricsPort, 8080);
  assert.equal(config.webhookPort, undefined);
  assert.equal(config.leaseName, "driftless-manager");
  assert.equal(config.allowFileRepos, false);
  assert.equal(config.redisUrl, "redis://127.0.0.1:6379");
  assert.equal(config.reconcilerRedisUrl, config.redisUrl);
});

test("flags win over environment variables", () => {
  const config = parseConfig(
    ["--reconciler-mode", "deployment", "--redis-url", "redis://flag:1"],
    { RECONCILER_MODE: "process", REDIS_URL: "redis://env:1", KUBECONFIG: "/k" },
    noSecret,
  );
  assert.equal(config.reconcilerMode, "deployment");
  assert.equal(config.redisUrl, "redis://flag:1");
  assert.equal(config.kubeconfig, "/k");
});

test("the webhook needs a secret file, read and trimmed; an empty one is refused", () => {
  assert.throws(() => parseConfig(["--webhook-port", "9000"], {}, noSecret), ConfigError);
  const config = parseConfig(["--webhook-port", "0", "--webhook-secret-file", "/s"], {}, () => "s3cret\n");
  assert.equal(config.webhookPort, 0);
  assert.equal(config.webhookSecret, "s3cret");
  assert.throws(() => parseConfig([], { WEBHOOK_PORT: "9000", WEBHOOK_SECRET_FILE: "/s" }, () => " \n"), /empty/);
  assert.throws(() => parseConfig([], { WEBHOOK_PORT: "9000", WEBHOOK_SECRET_FILE: "/missing" }, noSecret), /missing/);
});

test("malformed values are ConfigErrors naming the flag", () => {
  assert.throws(() => parseConfig(["--reconciler-mode", "pod"], {}, noSecret), /--reconciler-mode/);
  assert.throws(() => parseConfig(["--metrics-port", "http"], {}, noSecret), /--metrics-port/);
  assert.throws(() => parseConfig([], { LOG_LEVEL: "loud" }, noSecret), /--log-level/);
  assert.throws(() => parseConfig(["--resync-period", "0"], {}, noSecret), /--resync-period/);
  assert.equal(parseConfig([], { DRIFTLESS_ALLOW_FILE_REPOS: "true" }, noSecret).allowFileRepos, true);
});

test("the Redis password comes from REDIS_PASSWORD, never a flag, and is added to the URL", () => {
  const config = parseConfig([], { REDIS_URL: "redis://redis:6379", REDIS_PASSWORD: "p@ss/w:rd" }, noSecret);
  assert.equal(new URL(config.redisUrl).hostname, "redis");
  assert.equal(decodeURIComponent(new URL(config.redisUrl).password), "p@ss/w:rd");
  for (const flag of ["--redis-url", "--reconciler-redis-url"]) {
    assert.throws(
      () => parseConfig([flag, "redis://:hunter2@redis:6379"], {}, noSecret),
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

test("deployment mode never writes the Redis password into reconciler Deployments: they read it from a Secret", () => {
  const env = { RECONCILER_MODE: "deployment", REDIS_URL: "redis://redis:6379", REDIS_PASSWORD: "hunter2" };
  assert.throws(() => parseConfig([], env, noSecret), /--reconciler-redis-secret/);
  assert.throws(
    () => parseConfig([], { RECONCILER_MODE: "deployment", REDIS_URL: "redis://:hunter2@redis:6379" }, noSecret),
    /--reconciler-redis-secret/,
  );
  const config = parseConfig([], { ...env, RECONCILER_REDIS_SECRET: "driftless-redis" }, noSecret);
  assert.equal(config.reconcilerRedisUrl, "redis://redis:6379");
  assert.deepEqual(config.reconcilerRedisSecret, { name: "driftless-redis", key: "password" });
  const own = parseConfig(
    ["--reconciler-redis-secret", "queues/redis-password"],
    { ...env, RECONCILER_REDIS_URL: "rediss://driftless:hunter2@queues.example:6380" },
    noSecret,
  );
  assert.equal(own.reconcilerRedisUrl, "rediss://driftless@queues.example:6380");
  assert.deepEqual(own.reconcilerRedisSecret, { name: "queues", key: "redis-password" });
  assert.throws(() => parseConfig(["--reconciler-redis-secret", "Bad_Name"], {}, noSecret), /NAME or NAME\/KEY/);
  // Without a password, nothing is needed.
  assert.equal(parseConfig([], { RECONCILER_MODE: "deployment" }, noSecret).reconcilerRedisSecret, undefined);
});

test("admission protection is off unless a port is given; a URL needs the port and https", () => {
  assert.equal(parseConfig([], {}, noSecret).admissionWebhook, undefined);
  assert.deepEqual(parseConfig(["--admission-webhook-port", "0"], {}, noSecret).admissionWebhook, {
    port: 0,
    url: undefined,
  });
  assert.deepEqual(
    parseConfig(
      [],
      { ADMISSION_WEBHOOK_PORT: "8443", ADMISSION_WEBHOOK_URL: "https://hooks.example:8443/admission-webhook" },
      noSecret,
    ).admissionWebhook,
    { port: 8443, url: "https://hooks.example:8443/admission-webhook" },
  );
  assert.throws(() => parseConfig(["--admission-webhook-port", "x"], {}, noSecret), /--admission-webhook-port/);
  assert.throws(
    () => parseConfig(["--admission-webhook-url", "https://h/p"], {}, noSecret),
    /needs --admission-webhook-port/,
  );
  assert.throws(
    () => parseConfig(["--admission-webhook-port", "1", "--admission-webhook-url", "http://h/p"], {}, noSecret),
    /https/,
  );
});

test("a RepoSync's shell in rendering is refused unless --allow-reposync-shell-in-rendering (or its variable) says so", () => {
  assert.equal(parseConfig([], {}, noSecret).allowRepoSyncShellInRendering, false);
  assert.equal(parseConfig(["--allow-reposync-shell-in-rendering"], {}, noSecret).allowRepoSyncShellInRendering, true);
  const fromEnv = parseConfig([], { DRIFTLESS_ALLOW_REPOSYNC_SHELL_IN_RENDERING: "true" }, noSecret);
  assert.equal(fromEnv.allowRepoSyncShellInRendering, true);
});
