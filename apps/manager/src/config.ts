import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { hasRedisPassword, isRedisUrl, withoutRedisCredentials, withRedisPassword } from "@driftless/queue";

/** Settings of the manager process, from flags or environment variables (flags win). */
export interface ManagerConfig {
  readonly kubeconfig: string | undefined;
  /** With the admin password (REDIS_PASSWORD), for the manager alone: reconcilers get ACL users of their own. */
  readonly redisUrl: string;
  readonly reconcilerMode: "process" | "deployment";
  readonly metricsPort: number | undefined;
  readonly webhookPort: number | undefined;
  /** The shared webhook secret, read from --webhook-secret-file (never a flag value: flags show in `ps`). */
  readonly webhookSecret: string | undefined;
  readonly queuePrefix: string | undefined;
  readonly allowFileRepos: boolean;
  /** Honour spec.override.enableShellInRendering on RepoSyncs (off: such a RepoSync is refused, KNV1061). */
  readonly allowRepoSyncShellInRendering: boolean;
  readonly syncSelector: string | undefined;
  /** Config Sync's resource-group-controller for groups no reconciler keeps (undefined: on in process mode without --sync-selector). */
  readonly resourceGroupController: boolean | undefined;
  readonly leaseName: string;
  readonly identity: string;
  readonly stateDir: string;
  readonly reconcilerImage: string;
  /** Never with credentials: it is written into every reconciler Deployment, beside a per-sync Secret. */
  readonly reconcilerRedisUrl: string;
  readonly resyncSeconds: number;
  /** This cluster's name, passed to reconcilers for cluster selectors (Config Sync's --cluster-name). */
  readonly clusterName: string | undefined;
  readonly logLevel: "debug" | "info" | "warn" | "error";
  /** Admission protection (off when undefined): the port of its HTTPS endpoint, and how the API server reaches it. */
  readonly admissionWebhook: { readonly port: number; readonly url: string | undefined } | undefined;
  /** Process mode: reconcilers that may be starting at once (undefined: 2 per CPU, at least 4). */
  readonly maxConcurrentStarts: number | undefined;
}

export class ConfigError extends Error {}

export const usage = `usage: driftless-manager [--kubeconfig PATH] [--redis-url URL] [--reconciler-mode process|deployment]
  [--metrics-port N] [--webhook-port N --webhook-secret-file PATH] [--queue-prefix P] [--allow-file-repos]
  [--allow-reposync-shell-in-rendering]
  [--sync-selector LABELS] [--lease-name NAME] [--identity ID] [--state-dir DIR] [--reconciler-image IMAGE]
  [--reconciler-redis-url URL] [--resync-period SECONDS]
  [--cluster-name NAME] [--log-level debug|info|warn|error] [--admission-webhook-port N [--admission-webhook-url URL]]
  [--max-concurrent-starts N] [--resource-group-controller true|false]
environment: KUBECONFIG, REDIS_URL, REDIS_PASSWORD (required, never a flag), RECONCILER_MODE, METRICS_PORT, WEBHOOK_PORT,
  WEBHOOK_SECRET_FILE, DRIFTLESS_QUEUE_PREFIX, DRIFTLESS_ALLOW_FILE_REPOS=true,
  DRIFTLESS_ALLOW_REPOSYNC_SHELL_IN_RENDERING=true, DRIFTLESS_SYNC_SELECTOR,
  DRIFTLESS_LEASE_NAME, POD_NAME (identity), DRIFTLESS_STATE_DIR, RECONCILER_IMAGE, RECONCILER_REDIS_URL,
  DRIFTLESS_RESYNC_PERIOD, CLUSTER_NAME, LOG_LEVEL, ADMISSION_WEBHOOK_PORT, ADMISSION_WEBHOOK_URL,
  DRIFTLESS_MAX_CONCURRENT_STARTS, DRIFTLESS_RESOURCE_GROUP_CONTROLLER`;

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
  "cluster-name": "CLUSTER_NAME",
  "log-level": "LOG_LEVEL",
  "admission-webhook-port": "ADMISSION_WEBHOOK_PORT",
  "admission-webhook-url": "ADMISSION_WEBHOOK_URL",
  "max-concurrent-starts": "DRIFTLESS_MAX_CONCURRENT_STARTS",
  "resource-group-controller": "DRIFTLESS_RESOURCE_GROUP_CONTROLLER",
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
    options: {
      ...options,
      "allow-file-repos": { type: "boolean" },
      "allow-reposync-shell-in-rendering": { type: "boolean" },
    },
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
  const admissionPort = port("admission-webhook-port", pick("admission-webhook-port"));
  const admissionUrl = pick("admission-webhook-url");
  if (admissionUrl !== undefined && (admissionPort === undefined || !/^https:\/\/[^/]+\//.test(admissionUrl)))
    throw new ConfigError(
      "--admission-webhook-url needs --admission-webhook-port and must be an https:// URL with a path",
    );
  const starts = pick("max-concurrent-starts");
  const maxConcurrentStarts = starts === undefined ? undefined : Number(starts);
  if (maxConcurrentStarts !== undefined && (!Number.isInteger(maxConcurrentStarts) || maxConcurrentStarts < 1))
    throw new ConfigError(`--max-concurrent-starts must be a whole number >= 1, got ${JSON.stringify(starts)}`);
  const resourceGroups = pick("resource-group-controller");
  if (resourceGroups !== undefined && resourceGroups !== "true" && resourceGroups !== "false")
    throw new ConfigError(`--resource-group-controller must be true or false, got ${JSON.stringify(resourceGroups)}`);
  const redis = redisSettings((flag) => (values as Record<string, unknown>)[flag], pick, env["REDIS_PASSWORD"]);
  return {
    kubeconfig: pick("kubeconfig"),
    redisUrl: redis.url,
    reconcilerMode: mode,
    metricsPort: port("metrics-port", pick("metrics-port") ?? "8080"),
    webhookPort,
    webhookSecret,
    queuePrefix: pick("queue-prefix"),
    allowFileRepos: values["allow-file-repos"] === true || env["DRIFTLESS_ALLOW_FILE_REPOS"] === "true",
    allowRepoSyncShellInRendering:
      values["allow-reposync-shell-in-rendering"] === true ||
      env["DRIFTLESS_ALLOW_REPOSYNC_SHELL_IN_RENDERING"] === "true",
    syncSelector: pick("sync-selector"),
    resourceGroupController: resourceGroups === undefined ? undefined : resourceGroups === "true",
    leaseName: pick("lease-name") ?? "driftless-manager",
    identity: pick("identity") ?? `${hostname()}_${process.pid}`,
    stateDir: pick("state-dir") ?? defaultStateDir(),
    reconcilerImage: pick("reconciler-image") ?? "driftless:0.1.0",
    reconcilerRedisUrl: redis.reconcilerUrl,
    resyncSeconds,
    clusterName: pick("cluster-name"),
    logLevel,
    admissionWebhook: admissionPort === undefined ? undefined : { port: admissionPort, url: admissionUrl },
    maxConcurrentStarts,
  };
}

/**
 * A name of this user's own in the shared temp folder: another user who made it first gets the manager
 * refused (ProcessWorkload checks it), not its tokens. Not $XDG_RUNTIME_DIR: a small tmpfs, removed at
 * logout, and the git caches live here.
 */
function defaultStateDir(): string {
  const uid = process.getuid?.();
  return join(tmpdir(), uid === undefined ? "driftless-manager" : `driftless-manager-${uid}`);
}

/**
 * The Redis URLs: the manager's with the admin password, which comes from REDIS_PASSWORD (or
 * REDIS_URL), never a flag (`ps`); the reconcilers' with no credentials at all, since each one gets
 * an ACL user of its own. Messages never echo a URL: it may hold the password.
 */
function redisSettings(
  flag: (name: StringFlag) => unknown,
  pick: (name: StringFlag) => string | undefined,
  password: string | undefined,
): { readonly url: string; readonly reconcilerUrl: string } {
  for (const name of ["redis-url", "reconciler-redis-url"] as const) {
    const value = flag(name);
    if (typeof value === "string" && hasRedisPassword(value))
      throw new ConfigError(
        `--${name} carries a password, which \`ps\` shows: give the URL without it, and the password in REDIS_PASSWORD`,
      );
  }
  const url = pick("redis-url") ?? "redis://127.0.0.1:6379";
  const given = pick("reconciler-redis-url");
  for (const [name, value] of [
    ["redis-url", url],
    ["reconciler-redis-url", given],
  ] as const) {
    if (value !== undefined && !isRedisUrl(value))
      throw new ConfigError(`--${name} must be a redis:// or rediss:// URL with a host`);
  }
  const full = password === undefined || password === "" ? url : withRedisPassword(url, password);
  if (!hasRedisPassword(full))
    throw new ConfigError(
      "REDIS_PASSWORD is empty: the manager needs Redis's admin password (requirepass), and refuses an open Redis, where any client could read, forge or delete every sync's jobs",
    );
  return { url: full, reconcilerUrl: withoutRedisCredentials(given ?? url) };
}
