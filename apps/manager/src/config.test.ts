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
