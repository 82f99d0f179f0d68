/**
 * ioredis connections configured the way BullMQ needs them.
 *
 * Two roles, because producers and workers want opposite things from a lost connection:
 * - `producer` (Queue.add, counts): fail fast. With the offline queue off, a command issued while
 *   Redis is unreachable rejects at once instead of waiting for a reconnect, so a caller (a watch
 *   handler, a webhook) gets a classified retry error and carries on.
 * - `worker`: wait. BullMQ requires `maxRetriesPerRequest: null` for the blocking connection a
 *   Worker uses, and a worker has nothing better to do than wait for Redis to come back.
 * Both reconnect forever with capped exponential backoff and jitter (so a fleet of reconcilers
 * does not reconnect in lockstep after a Redis restart). A queue given a worker-role connection runs
 * its worker on it and fails enqueue fast itself (queue-core.ts): a reconciler needs one connection
 * fewer, and each costs Redis up to ~20 KiB while it talks.
 */
import { Redis, type RedisOptions } from "ioredis";
import { redactSecrets, redactUrl, secretsOf } from "./redact.ts";

export const RedisRole = {
  Producer: "producer",
  Worker: "worker",
} as const;
export type RedisRole = (typeof RedisRole)[keyof typeof RedisRole];

export interface RedisConnectionOptions {
  /** Default `producer`. */
  readonly role?: RedisRole;
  /** Shown in `CLIENT LIST`, which makes a stuck client easy to find. */
  readonly connectionName?: string;
  /** Cap of the reconnect backoff. Default 10 s. */
  readonly maxReconnectDelayMs?: number;
  /** Time allowed for one TCP connect + handshake. Default 5 s. */
  readonly connectTimeoutMs?: number;
  /**
   * Where connection trouble is reported, already redacted. Called once when an outage begins and
   * once when it ends (not once per reconnect attempt). Default: a line on stderr.
   */
  readonly log?: (message: string) => void;
}

/** A Redis connection as created here (a plain ioredis client). */
export type RedisConnection = Redis;

interface ConnectionInfo {
  readonly description: string;
  readonly secrets: readonly string[];
  readonly log: (message: string) => void;
}

// Connections remember their redacted URL so errors about them can name them without a secret.
const infos = new WeakMap<Redis, ConnectionInfo>();

const defaultLog = (message: string): void => {
  process.stderr.write(`${message}\n`);
};

/** Base delay of the first reconnect attempt; doubles per attempt up to the cap. */
const RECONNECT_BASE_MS = 50;

export function reconnectDelay(attempt: number, maxDelayMs: number, random: () => number = Math.random): number {
  const exponential = Math.min(maxDelayMs, RECONNECT_BASE_MS * 2 ** Math.min(attempt - 1, 20));
  // ±20% jitter, never above the cap.
  return Math.round(Math.min(maxDelayMs, exponential * (0.8 + 0.4 * random())));
}

function roleOptions(role: RedisRole): Partial<RedisOptions> {
  return role === RedisRole.Worker
    ? { maxRetriesPerRequest: null, enableOfflineQueue: true }
    : { maxRetriesPerRequest: 1, enableOfflineQueue: false };
}

/** The ioredis options for a role (without the URL), as createRedisConnection uses them. */
export function redisOptions(options: RedisConnectionOptions = {}): RedisOptions {
  const maxDelay = options.maxReconnectDelayMs ?? 10_000;
  return {
    ...roleOptions(options.role ?? RedisRole.Producer),
    // "ready" means Redis answered INFO and finished loading its dataset, not just TCP connected.
    enableReadyCheck: true,
    connectTimeout: options.connectTimeoutMs ?? 5_000,
    retryStrategy: (attempt) => reconnectDelay(attempt, maxDelay),
    ...(options.connectionName === undefined ? {} : { connectionName: options.connectionName }),
  };
}

/**
 * A new connection to `url` (`redis://[:password@]host:port[/db]` or `rediss://` for TLS). It
 * connects at once; BullMQ waits for it to be ready.
 */
export function createRedisConnection(url: string, options: RedisConnectionOptions = {}): RedisConnection {
  const redis = new Redis(url, redisOptions(options));
  watch(redis, { description: redactUrl(url), secrets: secretsOf(url), log: options.log ?? defaultLog });
  return redis;
}

/**
 * True for a connection that waits through an outage (worker role): a queue given one runs its
 * worker on it too, instead of opening a twin (one connection fewer per reconciler).
 */
export function waitsForRedis(connection: RedisConnection): boolean {
  return connection.options.maxRetriesPerRequest === null && connection.options.enableOfflineQueue !== false;
}

/**
 * A worker-role twin of `connection` (same server and credentials), for a BullMQ Worker. The caller
 * owns it and closes it with `closeRedisConnection`.
 */
export function workerConnection(connection: RedisConnection, connectionName?: string): RedisConnection {
  const twin = connection.duplicate({
    ...roleOptions(RedisRole.Worker),
    ...(connectionName === undefined ? {} : { connectionName }),
  });
  watch(twin, infos.get(connection) ?? { description: describeUnknown(connection), secrets: [], log: defaultLog });
  return twin;
}

/** The connection's server for messages, never with its password. */
export function describeConnection(connection: RedisConnection): string {
  return infos.get(connection)?.description ?? describeUnknown(connection);
}

/** `message` with the connection's password masked, should a driver ever echo it. */
export function redactFor(connection: RedisConnection, message: string): string {
  return redactSecrets(message, infos.get(connection)?.secrets ?? []);
}

/**
 * Closes a connection: politely (QUIT, so pending replies arrive) when it is up, at once when it
 * is not (QUIT would wait for a reconnect that may never come).
 */
export async function closeRedisConnection(connection: RedisConnection, timeoutMs = 2_000): Promise<void> {
  if (connection.status === "end") return;
  if (connection.status !== "ready") {
    connection.disconnect();
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  try {
    const result = await Promise.race([connection.quit().then(() => "quit" as const), timedOut]);
    if (result === "timeout") connection.disconnect();
  } catch {
    // QUIT failed because the connection dropped meanwhile: closing is all that was asked.
    connection.disconnect();
  } finally {
    clearTimeout(timer);
  }
}

function describeUnknown(connection: Redis): string {
  const { host, port, db } = connection.options;
  return `redis://${host ?? "?"}:${port ?? "?"}/${db ?? 0}`;
}

/**
 * Reports outages once at their start and once at their end. ioredis emits an error and a
 * `reconnecting` event per failed attempt; logging each would bury the one line that matters, so
 * the count is reported when the outage ends. An 'error' listener must exist in any case, or
 * ioredis prints the error itself.
 */
function watch(redis: Redis, info: ConnectionInfo): void {
  infos.set(redis, info);
  let outage = false;
  let attempts = 0;
  let lastError = "connection closed";
  const begin = (): void => {
    if (outage) return;
    outage = true;
    info.log(`redis ${info.description}: ${lastError}; reconnecting with backoff`);
  };
  redis.on("error", (error: Error) => {
    lastError = redactSecrets(error.message, info.secrets);
    begin();
  });
  // A connection that drops without an error (the server closed it) starts an outage too.
  redis.on("reconnecting", () => {
    attempts++;
    begin();
  });
  redis.on("ready", () => {
    if (outage) info.log(`redis ${info.description}: connected again after ${attempts} reconnect attempt(s)`);
    outage = false;
    attempts = 0;
    lastError = "connection closed";
  });
}
