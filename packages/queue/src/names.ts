/**
 * Queue names. BullMQ refuses `:` in a queue name (it separates the parts of its Redis keys), so
 * every sync's queue name is built from characters that are safe in a Redis key and is injective:
 * two different syncs never share a queue, and the name can be parsed back.
 */

/** The kinds of sync that own a queue. */
export const SyncKind = {
  RootSync: "RootSync",
  RepoSync: "RepoSync",
} as const;
export type SyncKind = (typeof SyncKind)[keyof typeof SyncKind];

/** Identity of one RootSync or RepoSync. */
export interface SyncRef {
  readonly kind: SyncKind;
  readonly namespace: string;
  readonly name: string;
}

/** The manager's own queue (ensure/teardown of reconcilers). */
export const MANAGER_QUEUE = "manager";

/** BullMQ key prefix used unless a caller (typically a test) chooses its own. */
export const DEFAULT_PREFIX = "driftless";

const SYNC_QUEUE_PREFIX = "sync";

// Namespaces are DNS-1123 labels ([a-z0-9-]), sync names DNS-1123 subdomains ([a-z0-9.-]). Anything
// else (only possible with unvalidated input) is escaped as `_xx`, and `_` itself is escaped, so
// the mapping stays injective. The namespace never keeps a `.`, so the first `.` after the kind
// always ends it, even when the sync's name contains dots.
const NAMESPACE_SAFE = /^[a-z0-9-]$/;
const NAME_SAFE = /^[a-z0-9.-]$/;

function escapePart(value: string, safe: RegExp): string {
  let out = "";
  for (const char of value) {
    if (safe.test(char)) {
      out += char;
    } else {
      // Per UTF-8 byte, so every code point (and `_` itself) escapes to a fixed, reversible form.
      for (const byte of Buffer.from(char, "utf8")) out += `_${byte.toString(16).padStart(2, "0")}`;
    }
  }
  return out;
}

function unescapePart(value: string): string | undefined {
  const bytes: number[] = [];
  for (let i = 0; i < value.length; i++) {
    const char = value[i];
    if (char === "_") {
      const hex = value.slice(i + 1, i + 3);
      if (!/^[0-9a-f]{2}$/.test(hex)) return undefined;
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else if (char !== undefined) {
      bytes.push(...Buffer.from(char, "utf8"));
    }
  }
  return Buffer.from(bytes).toString("utf8");
}

/**
 * The queue of one sync, e.g. `sync.rootsync.config-management-system.root-sync`. Stable across
 * restarts and processes: it depends only on the sync's identity.
 */
export function syncQueueName(sync: SyncRef): string {
  if (sync.namespace === "" || sync.name === "") {
    throw new TypeError(`syncQueueName: ${sync.kind} needs a namespace and a name`);
  }
  return [
    SYNC_QUEUE_PREFIX,
    sync.kind.toLowerCase(),
    escapePart(sync.namespace, NAMESPACE_SAFE),
    escapePart(sync.name, NAME_SAFE),
  ].join(".");
}

/** Inverse of `syncQueueName`; undefined for any other string (such as `manager`). */
export function parseSyncQueueName(queueName: string): SyncRef | undefined {
  const [prefix, kind, namespace, ...nameParts] = queueName.split(".");
  if (prefix !== SYNC_QUEUE_PREFIX || namespace === undefined || nameParts.length === 0) return undefined;
  const syncKind = Object.values(SyncKind).find((k) => k.toLowerCase() === kind);
  const parsedNamespace = unescapePart(namespace);
  const parsedName = unescapePart(nameParts.join("."));
  if (syncKind === undefined || parsedNamespace === undefined || parsedName === undefined) return undefined;
  if (parsedNamespace === "" || parsedName === "") return undefined;
  const sync: SyncRef = { kind: syncKind, namespace: parsedNamespace, name: parsedName };
  // Only canonical names parse, so parse and format are exact inverses.
  return syncQueueName(sync) === queueName ? sync : undefined;
}

/**
 * A key naming one sync inside a shared queue (the manager's de-duplication id). Same escaping as
 * the queue name, so it is unique per sync too.
 */
export function syncKey(sync: SyncRef): string {
  return syncQueueName(sync);
}
