import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

/** Settings of the manager process, from flags or environment variables (flags win). */
export interface ManagerConfig {
  readonly kubeconfig: string | undefined;
  readonly redisUrl: string;
  readonly reconcilerMode: "process" | "deployment";
  readonly metricsPort: number | undefined;
  readonly webhookPort: number | undefined;
  /** The shared webhook secret, read from --webhook-secret-file (never a flag value: flags show in `ps`). */
  readonly webhookSecret: string | undefined;
  readonly queuePrefix: string | undefined;
  readonly allowFileRepos: boolean;
  readonly syncSelector: string | undefined;
  readonly leaseName: string;
  readonly identity: string;
  readonly stateDir: string;
  readonly reconcilerImage: string;
  readonly reconcilerRedisUrl: string;
  readonly resyncSeconds: number;
  readonly logLevel: "debug" | "info" | "warn" | "error";
}

export class ConfigError extends Error {}

export const usage = `usage: driftless-manager [--kubeconfig PATH] [--redis-url URL] [--reconciler-mode process|deployment]
  [--metrics-port N] [--webhook-port N --webhook-secret-file PATH] [--queue-prefix P] [--allow-file-repos]
  [--sync-selector LABELS] [--lease-name NAME] [--identity ID] [--state-dir DIR] [--reconciler-image IMAGE]
  [--reconciler-redis-url URL] [--resync-period SECONDS] [--log-level debug|info|warn|error]
environment: KUBECONFIG, REDIS_URL, RECONCILER_MODE, METRICS_PORT, WEBHOOK_PORT, WEBHOOK_SECRET_FILE,
  DRIFTLESS_QUEUE_PREFIX, DRIFTLESS_ALLOW_FILE_REPOS=true, DRIFTLESS_SYNC_SELECTOR, DRIFTLESS_LEASE_NAME,
  POD_NAME (identity), DRIFTLESS_STATE_DIR, RECONCILER_IMAGE, RECONCILER_REDIS_URL, DRIFTLESS_RESYNC_PERIOD, LOG_LEVEL`;

const stringFlags = {
  kubeconfig: "KUBECONFIG",
  "redis-url": "REDIS_URL",
  "reconciler-mode": "RECONCILER_MODE",
  "metrics-port": "METRICS_PORT",
  "webhook-port": "WEBHOOK_PORT",
  "webhook-secret-file": "WEBHOOK_SECRET_FILE",
  "queue-prefix": "DRIFTLESS_QUEUE_PREFIX",
  "sync-selector": "DRIFTLESS_SYNC_SELECTOR",
  "lease-name": "DRIFTLESS_LEASE_NAME",
  identity: "POD_NAME",
  "state-dir": "DRIFTLESS_STATE_DIR",
  "reconciler-image": "RECONCILER_IMAGE",
  "reconciler-redis-url": "RECONCILER_REDIS_URL",
  "resync-period": "DRIFTLESS_RESYNC_PERIOD",
  "log-level": "LOG_LEVEL",
} as const;
type StringFlag = keyof typeof stringFlags;

function port(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new ConfigError(`--${name} must be a port number (0 picks a free one), got ${JSON.stringify(value)}`);
  return n;
}

/** Parses flags and environment; anything missing or malformed is a ConfigError naming it. */
export function parseConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  readSecret: (path: string) => string = (path) => readFileSync(path, "utf8"),
): ManagerConfig {
  const options = Object.fromEntries(Object.keys(stringFlags).map((k) => [k, { type: "string" as const }]));
  const { values } = parseArgs({
    args: [...argv],
    options: { ...options, "allow-file-repos": { type: "boolean" } },
    strict: true,
  });
  const pick = (flag: StringFlag): string | undefined => {
    const value = (values as Record<string, unknown>)[flag] ?? env[stringFlags[flag]];
    return typeof value === "string" && value !== "" ? value : undefined;
  };

  const mode = pick("reconciler-mode") ?? "process";
  if (mode !== "process" && mode !== "deployment")
    throw new ConfigError(`--reconciler-mode must be process or deployment, got ${JSON.stringify(mode)}`);
  const logLevel = pick("log-level") ?? "info";
  if (logLevel !== "debug" && logLevel !== "info" && logLevel !== "warn" && logLevel !== "error") {
    throw new ConfigError("--log-level must be debug, info, warn or error");
  }
  const webhookPort = port("webhook-port", pick("webhook-port"));
  const secretFile = pick("webhook-secret-file");
  if (webhookPort !== undefined && secretFile === undefined) {
    throw new ConfigError("--webhook-port needs --webhook-secret-file: unsigned pushes are never accepted");
  }
  let webhookSecret: string | undefined;
  if (secretFile !== undefined) {
    try {
      webhookSecret = readSecret(secretFile).trim();
    } catch (error) {
      throw new ConfigError(
        `--webhook-secret-file ${secretFile}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    if (webhookSecret === "") throw new ConfigError(`--webhook-secret-file ${secretFile} is empty`);
  }
  const resync = pick("resync-period") ?? "300";
  const resyncSeconds = Number(resync);
  if (!Number.isFinite(resyncSeconds) || resyncSeconds < 1)
    throw new ConfigError(`--resync-period must be a number of seconds >= 1, got ${JSON.stringify(resync)}`);
  const redisUrl = pick("redis-url") ?? "redis://127.0.0.1:6379";
  return {
    kubeconfig: pick("kubeconfig"),
    redisUrl,
    reconcilerMode: mode,
    metricsPort: port("metrics-port", pick("metrics-port") ?? "8080"),
    webhookPort,
    webhookSecret,
    queuePrefix: pick("queue-prefix"),
    allowFileRepos: values["allow-file-repos"] === true || env["DRIFTLESS_ALLOW_FILE_REPOS"] === "true",
    syncSelector: pick("sync-selector"),
    leaseName: pick("lease-name") ?? "driftless-manager",
    identity: pick("identity") ?? `${hostname()}_${process.pid}`,
    stateDir: pick("state-dir") ?? join(tmpdir(), "driftless-manager"),
    reconcilerImage: pick("reconciler-image") ?? "driftless:0.1.0",
    reconcilerRedisUrl: pick("reconciler-redis-url") ?? redisUrl,
    resyncSeconds,
    logLevel,
  };
}
