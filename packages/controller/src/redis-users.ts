/**
 * One Redis ACL user per reconciler, so a leaked reconciler credential opens one sync's queue and
 * nothing else. The manager, holding the admin password, creates, updates and deletes them with
 * ACL SETUSER / DELUSER; Redis keeps no users across a restart (no persistence), so `ensure` is
 * called on every manager job and re-creates a user that is gone.
 *
 * Rights: the sync's own BullMQ keys (`<prefix>:<queue>:*`: jobs, locks, events stream, markers,
 * de-duplication keys), no pub/sub channel, every command but the administrative and dangerous ones
 * (FLUSHALL, CONFIG, ACL, SHUTDOWN, CLIENT KILL, KEYS, DEBUG...), plus INFO, which ioredis's ready
 * check and BullMQ's version check run. SCAN and RANDOMKEY are taken away too: they are not
 * key-checked, and would list other syncs' job keys. Script-cache and function commands that reach
 * beyond the caller (SCRIPT FLUSH/KILL/DEBUG, FUNCTION) go; EVAL/EVALSHA stay (BullMQ is Lua), and
 * Redis checks every key a script touches against the same pattern. CLIENT TRACKING, DBSIZE, MEMORY
 * STATS and SELECT go too (below). INFO cannot be narrowed to a section (ACL rules name subcommands,
 * and INFO's sections are arguments): its keyspace section still tells how many keys Redis holds, never
 * their names.
 */
import { createHash, createHmac, randomBytes } from "node:crypto";
import { syncQueueName, type RedisConnection, type SyncRef } from "@driftless/queue";

const commandRules = [
  "-@all",
  "+@all",
  "-@admin",
  "-@dangerous",
  "+info",
  "-scan",
  "-randomkey",
  "-function",
  "-script|flush",
  "-script|kill",
  "-script|debug",
  // Not key-checked: BCAST tracking with another sync's prefix pushes that queue's key names to a
  // RESP3 client as they change; DBSIZE and MEMORY STATS count every sync's keys; SELECT reaches other
  // databases (the key pattern holds in each, but no queue lives there). BullMQ uses none of them.
  "-client|tracking",
  "-dbsize",
  "-memory|stats",
  "-select",
] as const;

/** A reconciler's Redis credential: handed to it as REDIS_USERNAME and REDIS_PASSWORD. */
export interface RedisCredential {
  readonly username: string;
  readonly password: string;
}

/** A fresh random password: 256 bits, hex (no character needs escaping anywhere). */
export function newRedisPassword(): string {
  return randomBytes(32).toString("hex");
}

/** How Redis identifies a password in ACL GETUSER: its SHA-256, hex. */
export function redisPasswordHash(password: string): string {
  return createHash("sha256").update(password).digest("hex");
}

/** Glob characters of Redis's pattern matcher, escaped so a prefix matches only itself. */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

export class ReconcilerRedisUsers {
  readonly #admin: RedisConnection;
  readonly #prefix: string;
  readonly #key: string;
  /** Users this manager keeps, by name: what `missing` looks for after Redis lost them. */
  readonly #kept = new Map<string, SyncRef>();

  /**
   * `admin`: a connection with the admin password; `prefix`: the BullMQ key prefix of the queues;
   * `key`: the secret derived passwords come from (the admin password, which only the manager holds).
   */
  constructor(admin: RedisConnection, prefix: string, key: string) {
    this.#admin = admin;
    this.#prefix = prefix;
    this.#key = key;
  }

  /**
   * The sync's password for `generation`, derived rather than random so that every manager replica,
   * and a manager after a restart, knows it without reading it back from the reconciler's Secret
   * (the manager reads no Secret) and re-creates a user Redis lost without replacing the pod.
   */
  derivedPassword(sync: SyncRef, generation: string): string {
    return createHmac("sha256", this.#key)
      .update(`${this.username(sync)}\n${generation}`)
      .digest("hex");
  }

  /**
   * The sync's user name: its queue's key prefix, which already names one sync injectively. Redis
   * refuses spaces in names, so those (only possible in a hand-made queue prefix) are escaped.
   */
  username(sync: SyncRef): string {
    return `${this.#prefix}:${syncQueueName(sync)}`.replace(/[\s%\0]/g, (c) => `%${c.charCodeAt(0).toString(16)}`);
  }

  /** The key pattern of the sync's queue; queue names hold no glob character, a prefix may. */
  keyPattern(sync: SyncRef): string {
    return `${escapeGlob(this.#prefix)}:${syncQueueName(sync)}:*`;
  }

  /**
   * Makes the user exist, enabled, with exactly the rights above and `password` among its
   * passwords; one ACL SETUSER, so a user Redis lost (a restart) is back and a user left by an
   * older manager gets today's rights. With `only`, every other password is dropped (nobody uses
   * one any more); without, they are kept, so a reconciler still running on the previous one
   * survives a reconnect until it is replaced. Changing passwords never disconnects a client that
   * already authenticated.
   */
  async ensure(sync: SyncRef, password: string, options: { readonly only: boolean }): Promise<void> {
    this.#kept.set(this.username(sync), sync);
    await this.#admin.call(
      "ACL",
      "SETUSER",
      this.username(sync),
      "on",
      ...(options.only ? ["resetpass"] : []),
      `>${password}`,
      "resetkeys",
      `~${this.keyPattern(sync)}`,
      "resetchannels",
      "clearselectors",
      ...commandRules,
    );
  }

  /** Deletes the user; Redis closes its connections at once. Nothing to do when it is gone. */
  async remove(sync: SyncRef): Promise<void> {
    this.#kept.delete(this.username(sync));
    await this.#admin.call("ACL", "DELUSER", this.username(sync));
  }

  /** Forgets a user without deleting it (a reconciler this manager stopped running, as on shutdown). */
  forget(sync: SyncRef): void {
    this.#kept.delete(this.username(sync));
  }

  /** Syncs whose user this manager keeps but Redis no longer has (restarted, or deleted by hand). */
  async missing(): Promise<SyncRef[]> {
    if (this.#kept.size === 0) return [];
    const reply = await this.#admin.call("ACL", "USERS");
    const present = new Set(Array.isArray(reply) ? reply.map(String) : []);
    return [...this.#kept].filter(([name]) => !present.has(name)).map(([, sync]) => sync);
  }
}
