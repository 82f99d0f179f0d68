/**
 * What an informer is given (the client it lists and watches through, its options), and the list
 * and watch requests those options make.
 */
import type { BackoffOptions } from "./backoff.ts";
import type { ListOptions, WatchOptions } from "./client-options.ts";
import type { KubeApiError } from "./errors.ts";
import type { KubeObject, ListPage, ResourceMapping, WatchEvent } from "./types.ts";

/** What an informer needs from a client (KubeClient has it); tests inject their own. */
export interface ListWatchSource {
  listPages(m: ResourceMapping, opts: ListOptions): AsyncIterable<ListPage>;
  watch(m: ResourceMapping, opts: WatchOptions): AsyncIterable<WatchEvent>;
  /** Aborted when the source closes (KubeClient.close()): its informers stop with it. */
  readonly closedSignal?: AbortSignal;
}

export interface InformerOptions {
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** Wait this long before relisting after a 410 Gone (default 0). */
  readonly resyncOnGoneMs?: number;
  /** Between failed lists or watches (default 200 ms doubling to 30 s). */
  readonly backoff?: BackoffOptions;
  /**
   * Relist once this many watches in a row failed (default 3), and after every further failure until
   * a watch is established again: a server that refuses watches for good (RBAC allows list, not
   * watch; a conversion webhook failing on watch) would otherwise leave the cache frozen. Fewer
   * failures (a dropped connection) re-watch from the last resourceVersion, which costs no list.
   */
  readonly relistAfterWatchFailures?: number;
  /** Server-side lifetime of one watch (default: random in [300, 600) s, so informers do not re-watch in lockstep). */
  readonly watchTimeoutSeconds?: number;
  /** Page size of the list (default 500). */
  readonly pageSize?: number;
  /** Cache only each object's metadata (PartialObjectMetadata): for watchers of large objects such as CRDs. */
  readonly metadataOnly?: boolean;
  /** Told about every list/watch failure (the informer retries by itself) and handler exception. */
  readonly onError?: (error: Error) => void;
  /**
   * Told when a list or watch succeeds again after a failure onError was told of (`lastError` is
   * cleared): a relist that finds nothing changed announces no object, and a view showing the failure
   * would otherwise keep showing it.
   */
  readonly onRecovered?: () => void;
  /**
   * Given: a 404 from a list or watch (the resource type is gone, say its CRD was deleted) ends the
   * informer, as stop() does, and is told here instead of onError. Without it, the informer retries,
   * which for a deleted type is a warning every backoff step for as long as the process lives.
   */
  readonly onNotFound?: (error: KubeApiError) => void;
  /**
   * Applied to every object before it is cached or announced (client-go's SetTransform): drop
   * what the caller never reads, such as managedFields, which is often most of an object's size.
   */
  readonly transform?: (obj: KubeObject) => KubeObject;
  /**
   * Objects from the server this returns false for (by store key `namespace/name`) are neither
   * cached nor announced: a label selector narrows what the server sends, this what is kept. It sees
   * the copy as received, so a caller may still look at what it leaves out.
   */
  readonly accept?: (key: string, received: KubeObject) => boolean;
}

/** The list a relist makes, from the informer's options. */
export function listOptionsFor(o: InformerOptions, signal: AbortSignal): ListOptions {
  return {
    signal,
    pageSize: o.pageSize ?? 500,
    ...(o.metadataOnly === true ? { metadataOnly: true } : {}),
    ...(o.namespace === undefined ? {} : { namespace: o.namespace }),
    ...(o.labelSelector === undefined ? {} : { labelSelector: o.labelSelector }),
    ...(o.fieldSelector === undefined ? {} : { fieldSelector: o.fieldSelector }),
  };
}

/** The watch from `resourceVersion` on, from the informer's options. */
export function watchOptionsFor(
  o: InformerOptions,
  resourceVersion: string,
  signal: AbortSignal,
  isEcho: (version: string) => boolean,
  onOpen: () => void,
): WatchOptions {
  return {
    resourceVersion,
    allowWatchBookmarks: true,
    isEcho,
    onOpen,
    timeoutSeconds: o.watchTimeoutSeconds ?? 300 + Math.floor(Math.random() * 300),
    signal,
    ...(o.namespace === undefined ? {} : { namespace: o.namespace }),
    ...(o.labelSelector === undefined ? {} : { labelSelector: o.labelSelector }),
    ...(o.fieldSelector === undefined ? {} : { fieldSelector: o.fieldSelector }),
    ...(o.metadataOnly === true ? { metadataOnly: true } : {}),
  };
}
