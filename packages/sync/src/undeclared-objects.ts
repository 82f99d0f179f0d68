/**
 * Objects carrying this sync's ApplySet label that it does not declare: the watch caches leave them out
 * (anyone who may write an object can forge the label) and only their store keys are kept here, so they
 * can be reported as a current number: an object deleted, relabelled or declared leaves the count.
 */
import { storeKey, type ListPage, type ListWatchSource, type WatchEvent } from "@driftless/kube";

/**
 * Keys remembered per watched type, at most: ~100 bytes each, so a tenant forging millions of labels
 * costs this process at most ~1 MiB a type. Past it the count stops growing (it reads "at least").
 */
export const maxUndeclaredKeys = 10_000;

/**
 * One informer's undeclared keys. `former` holds objects an earlier pass declared and this one does not:
 * they are being pruned or released by this sync, not forged, and are not counted. A relist collects
 * both afresh (`listing`), and they replace the tally's once it completes.
 */
class TypeTally {
  readonly type: string;
  keys = new Set<string>();
  former = new Set<string>();
  listing: { readonly keys: Set<string>; readonly former: Set<string> } | undefined;

  constructor(type: string) {
    this.type = type;
  }

  add(key: string): void {
    if (this.former.has(key)) {
      this.listing?.former.add(key);
      return;
    }
    const into = this.listing?.keys ?? this.keys;
    if (into.size < maxUndeclaredKeys) into.add(key);
  }

  /** Declared by the last pass, not by this one: this sync's own prune or release is under way. */
  release(key: string): void {
    if (this.former.size < maxUndeclaredKeys) this.former.add(key);
    else this.add(key);
  }

  remove(key: string): void {
    this.keys.delete(key);
    this.former.delete(key);
    this.listing?.keys.delete(key);
    this.listing?.former.delete(key);
  }
}

/** The undeclared objects each informer (by its key) has seen, for the gauge and the pass's log line. */
export class UndeclaredObjects {
  private readonly tallies = new Map<string, TypeTally>();

  /** `type` names the informer's type in reports (`Kind` or `Kind.group`). */
  track(informer: string, type: string): void {
    if (!this.tallies.has(informer)) this.tallies.set(informer, new TypeTally(type));
  }

  /** The informer is gone (its version no longer declared, its CRD deleted, the reconciler stopping). */
  untrack(informer: string): void {
    this.tallies.delete(informer);
  }

  /** A labelled object left out of the cache (listed, watched, or dropped because no longer declared). */
  leftOut(informer: string, key: string): void {
    this.tallies.get(informer)?.add(key);
  }

  /** An object the last pass declared and this one does not (this sync prunes or releases it): not counted. */
  released(informer: string, key: string): void {
    this.tallies.get(informer)?.release(key);
  }

  /** The object is cached now, or gone from the server or from the label selector. */
  settled(informer: string, key: string): void {
    this.tallies.get(informer)?.remove(key);
  }

  /** Forgets, in every informer, the keys `declared` says are declared now (the pass will cache them). */
  declared(declared: (informer: string, key: string) => boolean): void {
    for (const [informer, tally] of this.tallies) {
      for (const set of [tally.keys, tally.former]) for (const key of set) if (declared(informer, key)) set.delete(key);
    }
  }

  /**
   * Wraps the source an informer lists and watches through: a relist's left-out keys replace the
   * tally's when it completes, and a DELETED event (the object deleted, or no longer matching the
   * label selector) settles its key. The informer drops such events silently for objects it never
   * cached, so only the stream itself tells that an undeclared object went away.
   */
  observed(informer: string, source: ListWatchSource): ListWatchSource {
    const tally = (): TypeTally | undefined => this.tallies.get(informer);
    return {
      get closedSignal() {
        return source.closedSignal;
      },
      listPages: (mapping, options) => listed(source.listPages(mapping, options), tally),
      watch: (mapping, options) => watched(source.watch(mapping, options), tally),
    };
  }

  /** How many undeclared objects each watched type has, 0 included (versions of one type summed). */
  byType(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const tally of this.tallies.values()) counts.set(tally.type, (counts.get(tally.type) ?? 0) + tally.keys.size);
    return counts;
  }
}

async function* listed(pages: AsyncIterable<ListPage>, tally: () => TypeTally | undefined): AsyncGenerator<ListPage> {
  const listing = { keys: new Set<string>(), former: new Set<string>() };
  let complete = false;
  try {
    for await (const page of pages) {
      const current = tally();
      if (page.restart) {
        listing.keys.clear();
        listing.former.clear();
      }
      if (current !== undefined) current.listing = listing;
      yield page;
    }
    complete = true;
  } finally {
    const current = tally();
    // An abandoned list (stopped, failed) proves nothing about the objects it did not reach.
    if (current?.listing === listing) {
      current.listing = undefined;
      if (complete) {
        current.keys = listing.keys;
        current.former = listing.former;
      }
    }
  }
}

async function* watched(
  events: AsyncIterable<WatchEvent>,
  tally: () => TypeTally | undefined,
): AsyncGenerator<WatchEvent> {
  for await (const event of events) {
    if (event.type === "DELETED")
      tally()?.remove(storeKey(event.object.metadata.namespace, event.object.metadata.name));
    yield event;
  }
}
