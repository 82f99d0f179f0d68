/**
 * The shapes this package speaks: objects as the API server sends them (kept open, because a
 * reconciler must round-trip fields it does not know), mappings from kinds to REST resources,
 * and watch events.
 */

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  deletionTimestamp?: string;
  ownerReferences?: OwnerReference[];
  creationTimestamp?: string;
  [k: string]: unknown;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

/** How a kind is served: which REST resource, at which scope, with which verbs. */
export interface ResourceMapping {
  /** "" for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** The plural resource name in URLs ("configmaps"). */
  readonly resource: string;
  readonly namespaced: boolean;
  readonly verbs: readonly string[];
}

/** The `Status` object the API server sends with failures (and in watch ERROR events). */
export interface ApiStatus {
  readonly status?: string;
  readonly message?: string;
  readonly reason?: string;
  readonly code?: number;
  readonly details?: StatusDetails;
}

export interface StatusDetails {
  readonly name?: string;
  readonly group?: string;
  readonly kind?: string;
  readonly uid?: string;
  readonly causes?: readonly StatusCause[];
  readonly retryAfterSeconds?: number;
}

export interface StatusCause {
  readonly reason?: string;
  readonly message?: string;
  readonly field?: string;
}

export const WatchEventType = {
  Added: "ADDED",
  Modified: "MODIFIED",
  Deleted: "DELETED",
  Bookmark: "BOOKMARK",
  Error: "ERROR",
} as const;
export type WatchEventType = (typeof WatchEventType)[keyof typeof WatchEventType];

/**
 * One event of a watch stream. BOOKMARK objects carry only `metadata.resourceVersion` (and the
 * kind); ERROR events carry a Status, e.g. code 410 when the requested resourceVersion is gone.
 */
export type WatchEvent =
  | { readonly type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK"; readonly object: KubeObject }
  | { readonly type: "ERROR"; readonly object: ApiStatus };

/** The result of a list: every item (with apiVersion and kind filled in) and the list's resourceVersion. */
export interface ObjectList {
  readonly items: KubeObject[];
  readonly resourceVersion: string;
}

/** One page of a list (KubeClient.listPages). */
export interface ListPage extends ObjectList {
  /**
   * The first page of a new snapshot, read after the pages before it could not be continued (410):
   * the items of the earlier pages are void.
   */
  readonly restart: boolean;
}
