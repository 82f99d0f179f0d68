/**
 * A list+watch cache of one resource, like client-go's reflector and informer: list once, then
 * watch from the list's resourceVersion; re-watch from the last seen resourceVersion when the
 * server ends a watch; relist when that resourceVersion is gone (410), or when watches keep failing
 * (only a list sees what changed meanwhile); back off on failures.
 */
import { setTimeout as delay } from "node:timers/promises";
import { Backoff } from "./backoff.ts";
import { asError, KubeApiError, isGone, isNotFound } from "./errors.ts";
import { listOptionsFor, watchOptionsFor, type InformerOptions, type ListWatchSource } from "./informer-options.ts";
import { ObjectStore, isOlder, keyOf, storeKey } from "./store.ts";
import type { KubeObject, ResourceMapping, WatchEvent } from "./types.ts";

export type InformerEvent = "add" | "update" | "delete";
export type InformerHandler = (obj: KubeObject, old?: KubeObject) => void;

/** Versions of our own writes awaited as watch events, at most (see Informer.#echoes). */
const maxPendingEchoes = 100_000;

/** A watch that ends this soon with no event is treated as a failure (backoff), not a rotation. */
const shortWatchMs = 1000;

export class Informer {
  readonly mapping: ResourceMapping;
  readonly #source: ListWatchSource;
  readonly #options: InformerOptions;
  readonly #store = new ObjectStore();
  readonly #transform: (obj: KubeObject) => KubeObject;
  readonly #handlers: Record<InformerEvent, Set<InformerHandler>> = {
    add: new Set(),
    update: new Set(),
    delete: new Set(),
  };
  readonly #backoff: Backoff;
  readonly #abort = new AbortController();
  readonly #synced: Promise<void>;
  #resolveSynced: () => void = () => undefined;
  #rejectSynced: (error: Error) => void = () => undefined;
  #hasSynced = false;
  #running: Promise<void> | undefined;
  #lastError: Error | undefined;
  /** When the watch first failed since one was last established (performance.now()). */
  #watchFailingSince: number | undefined;
  #watchError: Error | undefined;
  /** Watches in a row that failed, since one was last established. */
  #watchFailures = 0;
  #resourceVersion = "";
  /** Set while paused: resolves when resume() is called. */
  #paused: { readonly resumed: Promise<void>; readonly resume: () => void } | undefined;
  /** Aborts the watch in progress (pause), not the informer. */
  #watchAbort: AbortController | undefined;
  /**
   * resourceVersions we wrote (upsert) whose watch event has not come back yet: when it does, it is
   * recognised by its version and dropped unparsed (WatchOptions.isEcho). resourceVersions are etcd
   * revisions, one per write, so a version we wrote can only come back as the echo of that write.
   */
  readonly #echoes = new Set<string>();

  constructor(source: ListWatchSource, mapping: ResourceMapping, options: InformerOptions = {}) {
    this.#source = source;
    this.mapping = mapping;
    this.#options = options;
    this.#transform = options.transform ?? ((obj) => obj);
    this.#backoff = new Backoff(options.backoff ?? { initialMs: 200, maxMs: 30_000 });
    this.#synced = new Promise<void>((resolve, reject) => {
      this.#resolveSynced = resolve;
      this.#rejectSynced = reject;
    });
    // Rejected only by stop() before the first list; callers who await synced() still see it.
    this.#synced.catch(() => undefined);
  }

  /** Starts listing and watching in the background (once). */
  start(): void {
    if (this.#abort.signal.aborted) throw new Error("an informer cannot be restarted after stop()");
    // A closed client ends its informers too: one started while its owner was shutting down (after the
    // owner stopped the others) would otherwise retry its watch for ever and keep the process alive.
    const closed = this.#source.closedSignal;
    const signal = closed === undefined ? this.#abort.signal : AbortSignal.any([this.#abort.signal, closed]);
    this.#running ??= this.#run(signal).finally(() => {
      if (!this.#hasSynced && closed?.aborted === true)
        this.#rejectSynced(
          new Error(`informer for ${this.mapping.resource} ended before its first list: its client is closed`),
        );
    });
  }

  /** Ends the watch and waits until the informer is idle. */
  async stop(): Promise<void> {
    this.#abort.abort(new Error("informer stopped"));
    this.#paused?.resume();
    if (!this.#hasSynced)
      this.#rejectSynced(new Error(`informer for ${this.mapping.resource} stopped before its first list`));
    await this.#running;
  }

  /**
   * Closes the watch and keeps the cache as it is until resume(): reads and upserts go on, changes
   * on the server are not seen. For a writer that knows what it writes (the applier during a pass):
   * each of its own writes would come back as a watch event, which costs the API server and this
   * process about as much again as the write's own response. A first list still runs while paused.
   */
  pause(): void {
    if (this.#paused !== undefined) return;
    let resume: () => void = () => undefined;
    const resumed = new Promise<void>((resolve) => (resume = resolve));
    this.#paused = { resumed, resume };
    this.#watchAbort?.abort(new Error("informer paused"));
  }

  get paused(): boolean {
    return this.#paused !== undefined;
  }

  /**
   * Watches again, from where the watch stopped: the server replays every event since, in one
   * burst (a 410 there means a relist, as always), and the echoes of our own writes among it are
   * dropped unparsed.
   */
  resume(): void {
    const paused = this.#paused;
    this.#paused = undefined;
    paused?.resume();
  }

  /** Resolves after the first complete list. */
  synced(): Promise<void> {
    return this.#synced;
  }

  get hasSynced(): boolean {
    return this.#hasSynced;
  }

  /** The last failure of a list or watch; cleared once a list or watch succeeds again. */
  get lastError(): Error | undefined {
    return this.#lastError;
  }

  /**
   * When (performance.now()) the watch began failing, undefined while it is established: from then
   * on the cache holds only what the relists after it saw. Cleared by the first event of a watch
   * (or a watch the server ends normally), not by a relist.
   */
  get watchFailingSince(): number | undefined {
    return this.#watchFailingSince;
  }

  /** The last failure of the watch, or of a relist while it fails; cleared with watchFailingSince. */
  get watchError(): Error | undefined {
    return this.#watchError;
  }

  /** The resourceVersion the next watch starts from. */
  get resourceVersion(): string {
    return this.#resourceVersion;
  }

  get(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.#store.get(this.mapping.namespaced ? namespace : undefined, name);
  }

  /** How many objects the cache holds. */
  get size(): number {
    return this.#store.size;
  }

  list(): KubeObject[] {
    return this.#store.list();
  }

  /** The cached copy's resourceVersion, without parsing it; undefined when not cached. */
  resourceVersionOf(namespace: string | undefined, name: string): string | undefined {
    return this.#store.resourceVersionOf(storeKey(this.mapping.namespaced ? namespace : undefined, name));
  }

  /**
   * Write-through after our own write, so the next read does not see the older copy. Silent (no
   * handler runs); the watch event that follows with the same resourceVersion is not re-announced.
   */
  upsert(written: KubeObject): void {
    const obj = this.#transform(written);
    const version = obj.metadata.resourceVersion;
    if (isOlder(version, this.#store.resourceVersionOf(keyOf(obj)))) return;
    this.#store.set(obj);
    if (version === undefined) return;
    // Bounded: echoes that never come (a watch that had to relist) only cost memory until cleared.
    if (this.#echoes.size >= maxPendingEchoes) this.#echoes.clear();
    this.#echoes.add(version);
  }

  /** Drops, silently, every cached object `keep` returns false for (by store key); returns how many. */
  retain(keep: (key: string) => boolean): number {
    let dropped = 0;
    for (const key of [...this.#store.keys()]) {
      if (keep(key)) continue;
      this.#store.delete(key);
      dropped++;
    }
    return dropped;
  }

  /** Drops an object after our own delete; silent, like upsert. */
  forget(namespace: string | undefined, name: string): void {
    this.#store.delete(storeKey(this.mapping.namespaced ? namespace : undefined, name));
  }

  /** Subscribes to changes; returns the unsubscribe function. */
  on(event: InformerEvent, handler: InformerHandler): () => void {
    this.#handlers[event].add(handler);
    return () => this.#handlers[event].delete(handler);
  }

  async #run(signal: AbortSignal): Promise<void> {
    let rv: string | undefined;
    while (!signal.aborted) {
      const paused = this.#paused;
      if (paused !== undefined && rv !== undefined) {
        await paused.resumed; // resume() or stop()
        continue;
      }
      if (rv === undefined) {
        try {
          rv = await this.#relist(signal);
        } catch (error) {
          if (signal.aborted || this.#endedByNotFound(error)) return;
          this.#failed(error);
          await this.#sleep(this.#backoff.next(), signal);
        }
        continue; // paused meanwhile? checked first
      }
      // Aborted by stop() (through `signal`) or by pause(); the listener is removed after each watch,
      // so a long-lived informer does not collect one per watch on its signal.
      const watchAbort = new AbortController();
      const forwardStop = (): void => watchAbort.abort(signal.reason);
      signal.addEventListener("abort", forwardStop, { once: true });
      this.#watchAbort = watchAbort;
      const watchSignal = watchAbort.signal;
      const started = performance.now();
      let events = 0;
      try {
        // Accepted: a refusal and the failure a view shows are over (a quiet watch may bring no event for a minute).
        const watchOptions = watchOptionsFor(
          this.#options,
          rv,
          watchSignal,
          (version) => this.#echoes.delete(version),
          () => this.#watchOpened(),
        );
        for await (const event of this.#source.watch(this.mapping, watchOptions)) {
          if (event.type === "ERROR") throw KubeApiError.fromStatus(event.object, 0, `watch ${this.mapping.resource}`);
          if (events++ === 0) this.#watchEstablished();
          rv = this.#apply(event) ?? rv;
          this.#resourceVersion = rv;
        }
        if (watchSignal.aborted) continue; // stopped, or paused
        // The server ended the watch (its timeout): re-watch from where we are. One that ends at
        // once, with nothing in it, is a server refusing quietly; do not spin on it. One that lasted
        // was established, quiet or not.
        if (events === 0 && performance.now() - started < shortWatchMs) await this.#sleep(this.#backoff.next(), signal);
        else if (events === 0) this.#watchEstablished();
      } catch (error) {
        if (watchSignal.aborted) continue;
        if (this.#endedByNotFound(error)) return;
        if (isGone(error) && (events > 0 || performance.now() - started >= shortWatchMs)) {
          // Our resourceVersion fell out of the server's window: only a fresh list catches up.
          this.#failed(error);
          rv = undefined;
          await this.#sleep(this.#options.resyncOnGoneMs ?? 0, signal);
        } else if (isGone(error)) {
          // Gone at once, before any event: relisting at once would spin list and watch against the server.
          this.#watchFailed(error);
          rv = undefined;
          await this.#sleep(this.#backoff.next(), signal);
        } else {
          this.#watchFailed(error);
          if (this.#watchFailures >= (this.#options.relistAfterWatchFailures ?? 3)) rv = undefined;
          await this.#sleep(this.#backoff.next(), signal);
        }
      } finally {
        signal.removeEventListener("abort", forwardStop);
        this.#watchAbort = undefined;
      }
    }
  }

  /**
   * Replaces the cache with a fresh list, announcing what changed; returns the list's
   * resourceVersion. Pages are stored as they arrive, so the whole parsed list is never in memory.
   */
  async #relist(signal: AbortSignal): Promise<string> {
    const pages = this.#source.listPages(this.mapping, listOptionsFor(this.#options, signal));
    const seen = new Set<string>();
    let resourceVersion = "";
    // The watch after the list starts from the list's version: earlier writes will not come back.
    this.#echoes.clear();
    for await (const page of pages) {
      if (signal.aborted) return page.resourceVersion;
      if (page.restart) seen.clear();
      for (const obj of page.items) {
        seen.add(keyOf(obj));
        this.#put(obj);
      }
      resourceVersion = page.resourceVersion;
    }
    if (signal.aborted) return resourceVersion;
    for (const key of [...this.#store.keys()]) {
      if (seen.has(key)) continue;
      // Written by us (upsert) after the list's snapshot: the list cannot know it yet.
      if (isOlder(resourceVersion, this.#store.resourceVersionOf(key))) continue;
      const old = this.#store.getByKey(key);
      this.#store.delete(key);
      if (old !== undefined) this.#emit("delete", old);
    }
    this.#resourceVersion = resourceVersion;
    this.#listed();
    if (!this.#hasSynced) {
      this.#hasSynced = true;
      this.#resolveSynced();
    }
    return resourceVersion;
  }

  /** Applies one watch event; returns its resourceVersion. */
  #apply(event: Exclude<WatchEvent, { type: "ERROR" }>): string | undefined {
    const obj = event.object;
    const rv = obj.metadata.resourceVersion;
    switch (event.type) {
      case "BOOKMARK":
        break;
      case "ADDED":
      case "MODIFIED":
        this.#put(obj);
        break;
      case "DELETED": {
        const key = keyOf(obj);
        // A copy newer than the deletion is a re-creation we wrote through already.
        if (!this.#store.has(key) || isOlder(rv, this.#store.resourceVersionOf(key))) break;
        const old = this.#store.getByKey(key);
        this.#store.delete(key);
        this.#emit("delete", obj, old);
        break;
      }
    }
    return rv;
  }

  /** Stores a copy from the server unless ours is newer, and announces real changes. */
  #put(received: KubeObject): void {
    // Decided on the received copy, before the transform: most events after our own writes carry
    // a resourceVersion we stored already (upsert), and transforming them would be wasted work.
    const key = keyOf(received);
    const known = this.#store.has(key);
    if (this.#options.accept !== undefined && !this.#options.accept(key, received)) {
      // No longer wanted (or never): dropped silently, as retain() does.
      if (known) this.#store.delete(key);
      return;
    }
    const oldVersion = this.#store.resourceVersionOf(key);
    const version = received.metadata.resourceVersion;
    if (known && isOlder(version, oldVersion)) return;
    // The same resourceVersion is the same object (usually our own write, stored by upsert already);
    // without versions there is no telling, so the copy is replaced, silently as before.
    if (known && oldVersion === version && version !== undefined) return;
    const obj = this.#transform(received);
    if (!known) {
      this.#store.set(obj);
      this.#emit("add", obj);
      return;
    }
    if (oldVersion === undefined && version === undefined) {
      this.#store.set(obj);
      return;
    }
    const old = this.#store.getByKey(key);
    this.#store.set(obj);
    if (old !== undefined) this.#emit("update", obj, old);
  }

  #emit(event: InformerEvent, obj: KubeObject, old?: KubeObject): void {
    for (const handler of this.#handlers[event]) {
      try {
        handler(obj, old);
      } catch (error) {
        // A broken handler must not stop the cache; it is reported, never swallowed.
        this.#report(asError(error));
      }
    }
  }

  /** With onNotFound: a 404 ends the informer for good (see InformerOptions.onNotFound). */
  #endedByNotFound(error: unknown): boolean {
    const onNotFound = this.#options.onNotFound;
    if (onNotFound === undefined || !(error instanceof KubeApiError) || !isNotFound(error)) return false;
    this.#lastError = error;
    this.#abort.abort(error);
    if (!this.#hasSynced) this.#rejectSynced(error);
    onNotFound(error);
    return true;
  }

  #failed(error: unknown): void {
    this.#lastError = asError(error);
    // A relist failing while the watch does: the newer error says more about why.
    if (this.#watchFailingSince !== undefined) this.#watchError = this.#lastError;
    this.#report(this.#lastError);
  }

  #watchFailed(error: unknown): void {
    this.#watchFailingSince ??= performance.now();
    this.#watchFailures++;
    this.#failed(error);
  }

  /** A list succeeded: while the watch still fails, the backoff goes on, so relists do not spin. */
  #listed(): void {
    this.#recovered();
    if (this.#watchFailingSince === undefined) this.#backoff.reset();
  }

  /**
   * The server accepted a watch: its refusal is over, and so is the failure a view shows. The spell of
   * failure (watchFailingSince: a cache not to trust), the backoff and the failure count end only once the
   * watch proves itself (an event, or a watch that lasted): one accepted, then answered 410 or cut before any
   * event, is no working watch, and a server that accepts and ends each watch at once is not asked again at once.
   */
  #watchOpened(): void {
    this.#watchError = undefined;
    this.#recovered(); // last: onRecovered sees the watch working
  }

  #watchEstablished(): void {
    this.#watchFailingSince = undefined;
    this.#watchOpened();
    this.#watchFailures = 0;
    this.#backoff.reset();
  }

  #recovered(): void {
    if (this.#lastError === undefined) return;
    this.#lastError = undefined;
    this.#options.onRecovered?.();
  }

  #report(error: Error): void {
    if (this.#options.onError !== undefined) this.#options.onError(error);
    else process.emitWarning(error, { code: "DRIFTLESS_INFORMER" });
  }

  async #sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (ms <= 0) return;
    try {
      await delay(ms, undefined, { signal });
    } catch {
      // Aborted: the loop checks the signal next.
    }
  }
}
