import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Defaults, isSyncKind, parseDuration, type SyncKind } from "@driftless/api";
import { hasRedisPassword, isRedisUrl, withRedisCredentials, withRedisPassword } from "@driftless/queue";
import { defaultRenderToolsDir } from "@driftless/sync/render";

/** Settings of one reconciler process, from flags or (for the Deployment) environment variables. */
export interface ReconcilerConfig {
  readonly kubeconfig: string | undefined;
  /** With the reconciler's own ACL user and password (REDIS_USERNAME, REDIS_PASSWORD), given by the manager. */
  readonly redisUrl: string;
  readonly syncKind: SyncKind;
  readonly syncName: string;
  readonly syncNamespace: string;
  readonly metricsPort: number | undefined;
  readonly cacheDir: string;
  readonly queuePrefix: string | undefined;
  readonly logLevel: "debug" | "info" | "warn" | "error";
  readonly allowFileRepos: boolean;
  /** Full pass at least this often even when Git is unchanged (ms); undefined = the reconciler's default. */
  readonly resyncPeriodMs: number | undefined;
  /** This cluster's name, for cluster selectors in the source (Config Sync's --cluster-name); undefined: none. */
  readonly clusterName: string | undefined;
  /** The folder holding kustomize and helm; undefined: PATH. */
  readonly renderToolsDir: string | undefined;
  /** Client-side deadline of one API server request (override.apiServerTimeout); 15 s unless given. */
  readonly apiServerTimeoutMs: number;
  /** The pod's render container (its unix socket); undefined: kustomize runs as a child of this process. */
  readonly renderSocket: string | undefined;
  /** Honour a RepoSync's spec.override.enableShellInRendering: only when the manager allows it. */
  readonly allowRepoSyncShellInRendering: boolean;
}

export class ConfigError extends Error {}

export const usage = `usage: driftless-reconciler --sync-kind RootSync|RepoSync --sync-name NAME --sync-namespace NS
  [--kubeconfig PATH] [--redis-url URL] [--metrics-port N] [--cache-dir DIR] [--queue-prefix P] [--log-level L]
  [--allow-file-repos]   (local mode: accept file:// repositories)
  [--resync-period D]    (full pass over unchanged Git at least this often, e.g. 5m; 0 = every poll)
  [--cluster-name NAME]  (this cluster's name, for ClusterSelectors and cluster-name-selector annotations)
  [--render-tools-dir DIR] (kustomize and helm; default: the .local/bin build of a driftless checkout, else PATH)
  [--api-server-timeout D] (deadline of one API server request, e.g. 15s: the sync's override.apiServerTimeout)
  [--render-socket PATH] (render through the pod's render container listening there, never in this process; its sync is annotated configsync.gke.io/requires-rendering so the manager adds the container)
  [--allow-reposync-shell-in-rendering] (honour a RepoSync's override.enableShellInRendering; the manager decides)
   or: driftless-reconciler --render-server SOCKET [--render-source-root DIR] [--render-tools-dir DIR] [--log-level L]
environment: KUBECONFIG, REDIS_URL, REDIS_USERNAME, REDIS_PASSWORD (required; never a flag), SYNC_KIND, SYNC_NAME, SYNC_NAMESPACE, METRICS_PORT, DRIFTLESS_CACHE_DIR,
  DRIFTLESS_QUEUE_PREFIX, LOG_LEVEL, DRIFTLESS_ALLOW_FILE_REPOS=true, RESYNC_PERIOD, CLUSTER_NAME,
  DRIFTLESS_RENDER_TOOLS_DIR, API_SERVER_TIMEOUT, DRIFTLESS_RENDER_SOCKET,
  DRIFTLESS_ALLOW_REPOSYNC_SHELL_IN_RENDERING=true`;

/** Flags win over environment variables; anything missing or malformed is a ConfigError naming it. */
export function parseConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): ReconcilerConfig {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      kubeconfig: { type: "string" },
      "redis-url": { type: "string" },
      "sync-kind": { type: "string" },
      "sync-name": { type: "string" },
      "sync-namespace": { type: "string" },
      "metrics-port": { type: "string" },
      "cache-dir": { type: "string" },
      "queue-prefix": { type: "string" },
      "log-level": { type: "string" },
      "allow-file-repos": { type: "boolean" },
      "resync-period": { type: "string" },
      "cluster-name": { type: "string" },
      "render-tools-dir": { type: "string" },
      "api-server-timeout": { type: "string" },
      "render-socket": { type: "string" },
      "allow-reposync-shell-in-rendering": { type: "boolean" },
    },
    strict: true,
  });
  const pick = (
    flag: Exclude<keyof typeof values, "allow-file-repos" | "allow-reposync-shell-in-rendering">,
    name: string,
  ): string | undefined => {
    const value = values[flag] ?? env[name];
    return typeof value === "string" && value !== "" ? value : undefined;
  };
  const syncKind = pick("sync-kind", "SYNC_KIND");
  if (!isSyncKind(syncKind))
    throw new ConfigError(`--sync-kind must be RootSync or RepoSync, got ${JSON.stringify(syncKind)}`);
  const syncName = pick("sync-name", "SYNC_NAME");
  if (syncName === undefined) throw new ConfigError("--sync-name is required");
  const syncNamespace = pick("sync-namespace", "SYNC_NAMESPACE");
  if (syncNamespace === undefined) throw new ConfigError("--sync-namespace is required");
  const port = pick("metrics-port", "METRICS_PORT");
  const metricsPort = port === undefined ? undefined : Number(port);
  if (metricsPort !== undefined && (!Number.isInteger(metricsPort) || metricsPort < 0 || metricsPort > 65535)) {
    throw new ConfigError(`--metrics-port must be a port number, got ${JSON.stringify(port)}`);
  }
  const resync = pick("resync-period", "RESYNC_PERIOD");
  const resyncPeriodMs = resync === undefined ? undefined : resync === "0" ? 0 : parseDuration(resync);
  if (resync !== undefined && resyncPeriodMs === undefined)
    throw new ConfigError(`--resync-period must be a duration such as 5m or 30s, got ${JSON.stringify(resync)}`);
  // A flag shows in `ps`; the password comes from the environment (a Secret in a pod, the manager in process mode).
  if (values["redis-url"] !== undefined && hasRedisPassword(values["redis-url"]))
    throw new ConfigError("--redis-url carries a password, which `ps` shows: give it in REDIS_URL or REDIS_PASSWORD");
  const redisUrl = pick("redis-url", "REDIS_URL") ?? "redis://127.0.0.1:6379";
  if (!isRedisUrl(redisUrl)) throw new ConfigError("--redis-url must be a redis:// or rediss:// URL with a host");
  const password = env["REDIS_PASSWORD"] ?? "";
  const username = env["REDIS_USERNAME"] ?? "";
  if (password === "" && !hasRedisPassword(redisUrl))
    throw new ConfigError(
      "REDIS_PASSWORD is empty: a reconciler authenticates to Redis as its own user (REDIS_USERNAME, REDIS_PASSWORD, which the manager gives it), never to an open Redis",
    );
  const apiTimeout = pick("api-server-timeout", "API_SERVER_TIMEOUT");
  // Config Sync's default for override.apiServerTimeout, which the CRD documents.
  const apiServerTimeoutMs = apiTimeout === undefined ? Defaults.apiServerTimeoutMs : parseDuration(apiTimeout);
  if (apiServerTimeoutMs === undefined || apiServerTimeoutMs <= 0)
    throw new ConfigError(
      `--api-server-timeout must be a positive duration such as 15s, got ${JSON.stringify(apiTimeout)}`,
    );
  const logLevel = pick("log-level", "LOG_LEVEL") ?? "info";
  if (!["debug", "info", "warn", "error"].includes(logLevel))
    throw new ConfigError(`--log-level must be debug, info, warn or error`);
  return {
    kubeconfig: pick("kubeconfig", "KUBECONFIG"),
    redisUrl:
      password === ""
        ? redisUrl
        : username === ""
          ? withRedisPassword(redisUrl, password)
          : withRedisCredentials(redisUrl, username, password),
    syncKind,
    syncName,
    syncNamespace,
    metricsPort,
    cacheDir:
      pick("cache-dir", "DRIFTLESS_CACHE_DIR") ??
      join(tmpdir(), "driftless", `${syncKind.toLowerCase()}-${syncNamespace}-${syncName}`),
    queuePrefix: pick("queue-prefix", "DRIFTLESS_QUEUE_PREFIX"),
    logLevel: logLevel as ReconcilerConfig["logLevel"],
    allowFileRepos: values["allow-file-repos"] === true || env["DRIFTLESS_ALLOW_FILE_REPOS"] === "true",
    resyncPeriodMs,
    clusterName: pick("cluster-name", "CLUSTER_NAME"),
    renderToolsDir: pick("render-tools-dir", "DRIFTLESS_RENDER_TOOLS_DIR") ?? defaultRenderToolsDir(),
    apiServerTimeoutMs,
    renderSocket: pick("render-socket", "DRIFTLESS_RENDER_SOCKET"),
    allowRepoSyncShellInRendering:
      values["allow-reposync-shell-in-rendering"] === true ||
      env["DRIFTLESS_ALLOW_REPOSYNC_SHELL_IN_RENDERING"] === "true",
  };
}
