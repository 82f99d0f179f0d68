import { test } from "node:test";
import assert from "node:assert/strict";
import { ConfigError, parseConfig } from "./config.ts";
import { isRenderServer, parseRenderServerConfig } from "./render-server.ts";

const required = ["--sync-kind", "RepoSync", "--sync-name", "repo-sync", "--sync-namespace", "team-a"];

/** The credential the manager hands every reconciler. */
const pw = { REDIS_USERNAME: "driftless:sync.rootsync.ns.n", REDIS_PASSWORD: "pw" };

test("reads flags, falls back to environment variables, and flags win", () => {
  const config = parseConfig(["--sync-name", "from-flag"], {
    SYNC_KIND: "RootSync",
    SYNC_NAME: "from-env",
    SYNC_NAMESPACE: "config-management-system",
    ...pw,
    REDIS_URL: "redis://redis:6379",
    METRICS_PORT: "9090",
    RESYNC_PERIOD: "1m30s",
    DRIFTLESS_ALLOW_FILE_REPOS: "true",
  });
  assert.equal(config.syncKind, "RootSync");
  assert.equal(config.syncName, "from-flag");
  assert.equal(new URL(config.redisUrl).host, "redis:6379");
  assert.equal(config.metricsPort, 9090);
  assert.equal(config.resyncPeriodMs, 90_000);
  assert.equal(config.allowFileRepos, true);
});

test("defaults: local Redis, no metrics port, file:// refused, the reconciler's resync default", () => {
  const config = parseConfig(required, pw);
  assert.equal(new URL(config.redisUrl).host, "127.0.0.1:6379");
  assert.equal(config.metricsPort, undefined);
  assert.equal(config.allowFileRepos, false);
  assert.equal(config.resyncPeriodMs, undefined);
  assert.equal(parseConfig([...required, "--resync-period", "0"], pw).resyncPeriodMs, 0);
});

test("names what is wrong: kind, missing name, port, duration", () => {
  assert.throws(
    () => parseConfig(["--sync-kind", "Nope", "--sync-name", "a", "--sync-namespace", "b"], pw),
    (e: unknown) => e instanceof ConfigError && /sync-kind/.test(e.message),
  );
  assert.throws(() => parseConfig(["--sync-kind", "RepoSync", "--sync-namespace", "b"], pw), /--sync-name is required/);
  assert.throws(() => parseConfig([...required, "--metrics-port", "70000"], pw), /--metrics-port/);
  assert.throws(() => parseConfig([...required, "--resync-period", "soon"], pw), /--resync-period/);
});

test("the Redis password comes from REDIS_PASSWORD or REDIS_URL, never from a flag", () => {
  const config = parseConfig(required, { REDIS_URL: "redis://redis:6379/1", REDIS_PASSWORD: "p@ss w%rd" });
  const url = new URL(config.redisUrl);
  assert.equal(decodeURIComponent(url.password), "p@ss w%rd");
  assert.equal(url.hostname, "redis");
  assert.equal(url.pathname, "/1");
  assert.equal(parseConfig(required, { REDIS_URL: "redis://:hunter2@redis:6379" }).redisUrl.includes("hunter2"), true);
  assert.throws(
    () => parseConfig([...required, "--redis-url", "redis://:hunter2@redis:6379"], pw),
    (e: unknown) => e instanceof ConfigError && /--redis-url/.test(e.message) && !e.message.includes("hunter2"),
  );
  assert.throws(
    () => parseConfig(required, { REDIS_URL: "hunter2" }),
    (e: unknown) => !String(e).includes("hunter2"),
  );
});

test("the API server timeout comes from --api-server-timeout or API_SERVER_TIMEOUT (override.apiServerTimeout), defaults to 15s as in Config Sync, and must be a positive duration", () => {
  // Config Sync's default, as the CRD's text says.
  assert.equal(parseConfig(required, pw).apiServerTimeoutMs, 15_000);
  assert.equal(parseConfig([...required, "--api-server-timeout", "7s"], pw).apiServerTimeoutMs, 7_000);
  assert.equal(parseConfig(required, { ...pw, API_SERVER_TIMEOUT: "1m" }).apiServerTimeoutMs, 60_000);
  assert.throws(() => parseConfig([...required, "--api-server-timeout", "soon"], pw), ConfigError);
  assert.throws(() => parseConfig([...required, "--api-server-timeout", "0s"], pw), ConfigError);
});

test("the reconciler authenticates as the Redis user the manager gave it; no password is refused at start", () => {
  const url = new URL(parseConfig(required, { ...pw, REDIS_URL: "redis://redis:6379" }).redisUrl);
  assert.equal(decodeURIComponent(url.username), "driftless:sync.rootsync.ns.n");
  assert.equal(url.password, "pw");
  for (const env of [{}, { REDIS_USERNAME: "u", REDIS_PASSWORD: "" }]) {
    assert.throws(
      () => parseConfig(required, env),
      (e: unknown) => e instanceof ConfigError && e.message.includes("REDIS_PASSWORD is empty"),
    );
  }
});

test("renders in process unless given the render container's socket; a RepoSync's shell only when allowed", () => {
  const plain = parseConfig(required, pw);
  assert.equal(plain.renderSocket, undefined);
  assert.equal(plain.allowRepoSyncShellInRendering, false);
  const pod = parseConfig(required, {
    ...pw,
    DRIFTLESS_RENDER_SOCKET: "/render/render.sock",
    DRIFTLESS_ALLOW_REPOSYNC_SHELL_IN_RENDERING: "true",
  });
  assert.equal(pod.renderSocket, "/render/render.sock");
  assert.equal(pod.allowRepoSyncShellInRendering, true);
});

test("the render server mode needs its socket and a source root, and reads nothing else", () => {
  assert.equal(isRenderServer(["--render-server", "/render/render.sock"]), true);
  assert.equal(isRenderServer(required), false);
  const config = parseRenderServerConfig(["--render-server", "/render/render.sock"], {
    DRIFTLESS_RENDER_SOURCE_ROOT: "/cache",
  });
  assert.equal(config.socketPath, "/render/render.sock");
  assert.equal(config.sourceRoot, "/cache");
  assert.throws(() => parseRenderServerConfig(["--render-server", "/s"], {}), /--render-source-root/);
  assert.throws(() =>
    parseRenderServerConfig(["--render-server", "/s", "--sync-kind", "RootSync"], {
      DRIFTLESS_RENDER_SOURCE_ROOT: "/c",
    }),
  );
});
