/** The options a KubeClient is built with, and those of its requests and verbs. */
import type { QueryValue } from "./paths.ts";

export interface KubeClientOptions {
  /** Concurrent connections to the API server (default 32). */
  readonly maxSockets?: number;
  /** Default deadline of a request in ms (default 30 000); watches have none. */
  readonly timeoutMs?: number;
  readonly userAgent?: string;
  /** Idle keep-alive connections are closed after this long (default 30 000 ms). */
  readonly idleSocketTimeoutMs?: number;
  /** How many times a request is re-sent when the server answers 429/5xx with Retry-After (default 3). */
  readonly retryAfterAttempts?: number;
  /** Called with each `Warning` header (deprecated APIs, unknown fields). */
  readonly onWarning?: (warning: string, operation: string) => void;
  /**
   * Called right before a request that may change something (any method but GET and HEAD) is
   * sent, and before each re-send; what it throws rejects the request unsent. A leader's fence:
   * no write leaves after its lease may have passed to another replica.
   */
  readonly fence?: (operation: string) => void;
}

export interface KubeRequest {
  readonly method: string;
  /** Absolute API path, e.g. "/api/v1/namespaces". */
  readonly path: string;
  readonly query?: Readonly<Record<string, QueryValue>>;
  /** Sent as JSON (a string or Buffer is sent as it is). */
  readonly body?: unknown;
  readonly contentType?: string;
  readonly accept?: string;
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
}

export type PatchType = "merge" | "strategic-merge" | "json" | "apply";

export type FieldValidation = "Strict" | "Warn" | "Ignore";

export interface WriteOptions {
  readonly fieldManager?: string;
  readonly dryRun?: boolean;
  readonly fieldValidation?: FieldValidation;
  readonly signal?: AbortSignal;
  /**
   * "metadata": the answer holds only apiVersion, kind and metadata of what the server stored, read
   * out of the response without parsing the rest. For writers of large objects (a ResourceGroup of
   * 10,000 entries is megabytes) that need only the new resourceVersion.
   */
  readonly response?: "object" | "metadata";
}

export interface ListOptions {
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** Items per request; `continue` tokens are followed until the end (default 500). */
  readonly pageSize?: number;
  /** "" (default) for a consistent read; "0" to accept the watch cache's state. */
  readonly resourceVersion?: string;
  readonly signal?: AbortSignal;
  /** Only each object's metadata (PartialObjectMetadata): for a watcher of large objects that reads none of the rest. */
  readonly metadataOnly?: boolean;
}

export interface WatchOptions {
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly resourceVersion: string;
  readonly allowWatchBookmarks?: boolean;
  /** The server ends the watch after this long; the caller re-watches from the last resourceVersion. */
  readonly timeoutSeconds?: number;
  readonly signal: AbortSignal;
  /**
   * Asked, before parsing, about the resourceVersion of each ADDED or MODIFIED event: true means
   * the caller already holds that version (it wrote it), and the event arrives as a BOOKMARK with
   * that resourceVersion, its object never parsed.
   */
  readonly isEcho?: (resourceVersion: string) => boolean;
  /** Only each object's metadata (PartialObjectMetadata), as ListOptions.metadataOnly. */
  readonly metadataOnly?: boolean;
  /** Told once the server has accepted the watch (200), before any event: a quiet watch is a working one. */
  readonly onOpen?: () => void;
}

export interface DeleteOptions {
  readonly propagationPolicy?: "Foreground" | "Background" | "Orphan";
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string };
  readonly gracePeriodSeconds?: number;
  readonly dryRun?: boolean;
  readonly signal?: AbortSignal;
}

/**
 * What a DELETE did, from the server's answer: found nothing, removed the object, or marked it for deletion
 * (finalizers or a grace period hold it: it has a deletionTimestamp until they are done).
 */
export type DeleteResult = "absent" | "removed" | "deleting";

export const clientDefaults = {
  maxSockets: 32,
  timeoutMs: 30_000,
  idleSocketTimeoutMs: 30_000,
  retryAfterAttempts: 3,
  userAgent: "driftless/0.1.0",
} as const;
