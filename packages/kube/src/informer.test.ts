import assert from "node:assert/strict";
import { setImmediate as tick } from "node:timers/promises";
import { describe, it } from "node:test";
import type { ListOptions, WatchOptions } from "./client-options.ts";
import { KubeApiError, isGone } from "./errors.ts";
import type { ListWatchSource } from "./informer-options.ts";
import { Informer } from "./informer.ts";
import type { KubeObject, ListPage, ObjectList, ResourceMapping, WatchEvent } from "./types.ts";

const mapping: ResourceMapping = {
  group: "",
  version: "v1",
  kind: "ConfigMap",
  resource: "configmaps",
  namespaced: true,
  verbs: ["list", "watch"],
};

function cm(name: string, rv: string, data: Record<string, string> = {}): KubeObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "ns", resourceVersion: rv }, data };
}

function bookmark(rv: string): WatchEvent {
  return {
    type: "BOOKMARK",
    object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "", resourceVersion: rv } },
  };
}

const gone: WatchEvent = {
  type: "ERROR",
  object: { status: "Failure", message: "too old resource version: 5 (90)", reason: "Expired", code: 410 },
};

/**
 * A watch script: events to send, then the stream ends ("end"), fails (an Error) or stays open ("hang").
 * One that starts with an Error or "unanswered" (open, the server's answer still to come) was never accepted.
 */
type Step = WatchEvent | Error | "end" | "hang" | "unanswered";

/** A list+watch source that plays scripts and records what it was asked. */
class ScriptedSource implements ListWatchSource {
  readonly lists: (ObjectList | Error)[] = [];
  readonly watches: Step[][] = [];
  readonly listCalls: ListOptions[] = [];
  readonly watchCalls: WatchOptions[] = [];
  closedSignal?: AbortSignal;

  async *listPages(_m: ResourceMapping, opts: ListOptions): AsyncGenerator<ListPage> {
    this.listCalls.push(opts);
    const next = this.lists.shift();
    if (next === undefined) throw new Error("unexpected list");
    if (next instanceof Error) throw next;
    // Two pages when there are several items, so paging is exercised.
    const items = next.items.map((o) => structuredClone(o));
    const half = Math.ceil(items.length / 2);
    yield { items: items.slice(0, half), resourceVersion: next.resourceVersion, restart: false };
    if (items.length > half) yield { items: items.slice(half), resourceVersion: next.resourceVersion, restart: false };
  }

  watch(_m: ResourceMapping, opts: WatchOptions): AsyncIterable<WatchEvent> {
    this.watchCalls.push(opts);
    const script = this.watches.shift() ?? ["hang"];
    if (!(script[0] instanceof Error) && script[0] !== "unanswered") opts.onOpen?.();
    return play(script, opts.signal);
  }
}

async function* play(script: Step[], signal: AbortSignal): AsyncGenerator<WatchEvent> {
  for (const step of script) {
    await tick();
    if (step === "end") return;
    if (step === "hang" || step === "unanswered") {
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        else signal.addEventListener("abort", () => resolve(), { once: true });
      });
      return;
    }
    if (step instanceof Error) throw step;
    yield step;
  }
  // A script without an ending stays open, like a quiet watch.
  await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}

async function until(what: string, condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await tick();
  }
}

function record(informer: Informer): string[] {
  const log: string[] = [];
  informer.on("add", (o) => log.push(`add ${o.metadata.name}@${o.metadata.resourceVersion}`));
  informer.on("update", (o, old) =>
    log.push(`update ${o.metadata.name}@${old?.metadata.resourceVersion}->${o.metadata.resourceVersion}`),
  );
  informer.on("delete", (o) => log.push(`delete ${o.metadata.name}`));
  return log;
}

const fast = { initialMs: 1, maxMs: 2 };

/** A watch refused by RBAC (list allowed, watch not). */
function forbidden(): KubeApiError {
  return new KubeApiError({
    status: 403,
    reason: "Forbidden",
    operation: "watch configmaps",
    serverMessage: 'configmaps is forbidden: cannot watch resource "configmaps"',
  });
}

void describe("Informer", () => {
  void it("resolves synced() after the first list and serves the listed objects", async () => {
    const source = new ScriptedSource();
    source.lists.push({ items: [cm("a", "3"), cm("b", "4")], resourceVersion: "10" });
    const informer = new Informer(source, mapping, { namespace: "ns" });
    const log = record(informer);
    informer.start();
    await informer.synced();
    assert.deepEqual(log, ["add a@3", "add b@4"]);
    assert.equal(informer.get("ns", "a")?.metadata.resourceVersion, "3");
    assert.equal(informer.list().length, 2);
    assert.equal(source.listCalls[0]?.namespace, "ns");
    await until("the watch", () => source.watchCalls.length === 1);
    assert.equal(source.watchCalls[0]?.resourceVersion, "10");
    assert.equal(source.watchCalls[0]?.allowWatchBookmarks, true);
    await informer.stop();
  });

  void it("hands out copies: changing what get() returned does not change the cache", async () => {
    const source = new ScriptedSource();
    source.lists.push({ items: [cm("a", "3", { k: "v" })], resourceVersion: "10" });
    const informer = new Informer(source, mapping, { namespace: "ns" });
    informer.start();
    await informer.synced();
    const copy = informer.get("ns", "a");
    assert.ok(copy !== undefined);
    (copy["data"] as Record<string, string>)["k"] = "changed";
    assert.deepEqual(informer.get("ns", "a")?.["data"], { k: "v" });
    assert.notEqual(informer.get("ns", "a"), informer.get("ns", "a"));
    await informer.stop();
  });

  void it("applies ADDED, MODIFIED and DELETED events and tells handlers the old copy", async () => {
    const source = new ScriptedSource();
    source.lists.push({ items: [cm("a", "3")], resourceVersion: "10" });
    source.watches.push([
      { type: "ADDED", object: cm("b", "11") },
      { type: "MODIFIED", object: cm("a", "12", { x: "1" }) },
      { type: "DELETED", object: cm("b", "13") },
    ]);
    const informer = new Informer(source, mapping);
    const log = record(informer);
    informer.start();
    await until("three events", () => log.length === 4);
    assert.deepEqual(log, ["add a@3", "add b@11", "update a@3->12", "delete b"]);
    assert.deepEqual(informer.get("ns", "a")?.["data"], { x: "1" });
    assert.equal(informer.get("ns", "b"), undefined);
    assert.equal(informer.resourceVersion, "13");
    await informer.stop();
  });

  void it("relists after an ERROR 410 event and announces what changed meanwhile", async () => {
    const source = new ScriptedSource();
    source.lists.push({ items: [cm("a", "3"), cm("b", "4"), cm("c", "5")], resourceVersion: "10" });
    source.watches.push([bookmark("20"), gone]);
    // Meanwhile: a was deleted, b changed, c unchanged, d created.
    source.lists.push({ items: [cm("b", "30"), cm("c", "5"), cm("d", "31")], resourceVersion: "40" });
    const errors: Error[] = [];
    const informer = new Informer(source, mapping, { onError: (e) => errors.push(e), backoff: fast });
    const log = record(informer);
    informer.start();
    await until("the second watch", () => source.watchCalls.length === 2);
    assert.deepEqual(log, ["add a@3", "add b@4", "add c@5", "update b@4->30", "add d@31", "delete a"]);
    assert.equal(source.listCalls.length, 2);
    assert.equal(
      source.watchCalls[1]?.resourceVersion,
      "40",
      "the watch resumes from the relist, not from the gone bookmark",
    );
    assert.equal(errors.length, 1);
    assert.ok(isGone(errors[0]));
    assert.equal(informer.lastError, undefined, "a successful relist clears lastError");
    await informer.stop();
  });

  void it("relists when the watch call itself fails with 410 Gone", async () => {
    const source = new ScriptedSource();
    source.lists.push({ items: [], resourceVersion: "10" }, { items: [cm("a", "50")], resourceVersion: "50" });
    const goneError = KubeApiError.fromStatus(
      { code: 410, reason: "Expired", message: "too old" },
      410,
      "watch configmaps",
    );
    source.watches.push([goneError]);
    const informer = new Informer(source, mapping, { onError: () => undefined, backoff: fast });
    const log = record(informer);
    informer.start();
    await until("the second watch", () => source.watchCalls.length === 2);
    assert.deepEqual(log, ["add a@50"]);
    assert.equal(source.watchCalls[1]?.resourceVersion, "50");
    await informer.stop();
  });

  void it("backs off between relists when every watch from a fresh list is answered 410 at once", async (t) => {
    const source = new ScriptedSource();
    const expired = (): KubeApiError =>
      KubeApiError.fromStatus({ code: 410, reason: "Expired", message: "too old" }, 410, "watch configmaps");
    for (let i = 0; i < 10; i++) {
      source.lists.push({ items: [], resourceVersion: "10" });
      source.watches.push(i % 2 === 0 ? [expired()] : [gone]);
    }
    const listedAt: number[] = [];
    const listPages = source.listPages.bind(source);
    source.listPages = (m, opts) => {
      listedAt.push(performance.now());
      return listPages(m, opts);
    };
    const informer = new Informer(source, mapping, { onError: () => undefined, backoff: { initialMs: 40, maxMs: 80 } });
    t.after(() => informer.stop());
    informer.start();
    await until("the fourth list", () => listedAt.length >= 4);
    // Each relist waits at least the backoff's least delay (half of initialMs): no list-watch hot loop.
    const gaps = listedAt.slice(1, 4).map((at, i) => at - (listedAt[i] ?? 0));
    assert.ok(
      gaps.every((gap) => gap >= 20),
      `relists followed each other in ${gaps.map((g) => g.toFixed(1)).join(", ")} ms`,
    );
    assert.notEqual(informer.watchFailingSince, undefined, "a watch refused at once leaves the cache untrusted");
  });

  void it("re-watches from the last bookmark after a broken stream, without relisting", async () => {
    const source = new ScriptedSource();
    source.lists.push({ items: [cm("a", "3")], resourceVersion: "10" });
    source.watches.push([{ type: "MODIFIED", object: cm("a", "15") }, bookmark("25"), new Error("socket hang up")]);
    source.watches.push([{ type: "MODIFIED", object: cm("a", "26") }]);
    const errors: Error[] = [];
    const informer = new Informer(source, mapping, { onError: (e) => errors.push(e), backoff: fast });
    const log = record(informer);
    informer.start();
    await until("the update after reconnecting", () => log.length === 3);
    assert.deepEqual(log, ["add a@3", "update a@3->15", "update a@15->26"]);
    assert.deepEqual(
      source.watchCalls.map((c) => c.resourceVersion),
      ["10", "25"],
    );
    assert.equal(source.listCalls.length, 1);
    assert.equal(errors[0]?.message, "socket hang up");
    await informer.stop();
  });

  void it("relists after watches keep failing, announcing what changed, and reports the watch failing until one is established", async () => {
    const source = new ScriptedSource();
    source.lists.push({ items: [cm("a", "3"), cm("b", "4")], resourceVersion: "10" });
    source.watches.push([forbidden()], [forbidden()], [forbidden()]);
    // Meanwhile: a was deleted, c created; only the relist can tell.
    source.lists.push({ items: [cm("b", "4"), cm("c", "20")], resourceVersion: "30" });
    source.watches.push([bookmark("31")]);
    const errors: Error[] = [];
    const informer = new Informer(source, mapping, { onError: (e) => errors.push(e), backoff: fast });
    const log = record(informer);
    const failingAtRelist: (number | undefined)[] = [];
    informer.on("delete", () => failingAtRelist.push(informer.watchFailingSince));
    informer.start();
    await until(
      "the watch after the relist",
      () => source.watchCalls.length === 4 && informer.resourceVersion === "31",
    );
    assert.deepEqual(log, ["add a@3", "add b@4", "add c@20", "delete a"]);
    assert.deepEqual(
      source.watchCalls.map((c) => c.resourceVersion),
      ["10", "10", "10", "30"],
    );
    assert.equal(errors.length, 3);
    assert.ok(failingAtRelist[0] !== undefined, "still failing at the relist: only a watch clears it");
    assert.equal(informer.watchFailingSince, undefined, "cleared by the established watch's first event");
    assert.equal(informer.watchError, undefined);
    await informer.stop();
  });

  void it("while watches keep failing, relists after each further failure; a failed relist is the watch's error", async () => {
    const source = new ScriptedSource();
    source.lists.push(
      { items: [cm("a", "3")], resourceVersion: "10" },
      { items: [cm("a", "3")], resourceVersion: "20" },
      new Error("list refused"),
      { items: [cm("a", "3"), cm("b", "35")], resourceVersion: "40" },
    );
    source.watches.push([forbidden()], [forbidden()], [forbidden()], ["unanswered"]);
    const sinces: (number | undefined)[] = [];
    const informer = new Informer(source, mapping, {
      relistAfterWatchFailures: 2,
      onError: () => sinces.push(informer.watchFailingSince),
      backoff: fast,
    });
    informer.start();
    await until("the fourth watch", () => source.watchCalls.length === 4);
    assert.deepEqual(
      source.watchCalls.map((c) => c.resourceVersion),
      ["10", "10", "20", "40"],
    );
    assert.equal(source.listCalls.length, 4);
    assert.ok(informer.get("ns", "b") !== undefined);
    assert.equal(sinces.length, 4);
    assert.ok(
      sinces[0] !== undefined && sinces.every((since) => since === sinces[0]),
      "failing since the first failure",
    );
    assert.equal(informer.lastError, undefined, "the last relist succeeded");
    assert.equal(informer.watchError?.message, "list refused", "no watch established since");
    assert.ok(informer.watchFailingSince !== undefined);
    await informer.stop();
  });

  void it("re-watches at once from the last resourceVersion when the server ends a watch", async () => {
    const source = new ScriptedSource();
    source.lists.push({ items: [], resourceVersion: "10" });
    source.watches.push([{ type: "ADDED", object: cm("a", "11") }, "end"], [bookmark("12"), "end"], ["hang"]);
    const errors: Error[] = [];
    const informer = new Informer(source, mapping, { onError: (e) => errors.push(e) });
    informer.start();
    await until("the third watch", () => source.watchCalls.length === 3);
    assert.deepEqual(
      source.watchCalls.map((c) => c.resourceVersion),
      ["10", "11", "12"],
    );
    assert.equal(source.listCalls.length, 1);
    assert.deepEqual(errors, []);
    await informer.stop();
  });

  void it("backs off and retries a failing list, then clears lastError", async () => {
    const source = new ScriptedSource();
    source.lists.push(new Error("connection refused"), new Error("connection refused"), {
      items: [cm("a", "1")],
      resourceVersion: "2",
    });
    const informer = new Informer(source, mapping, { onError: () => undefined, backoff: fast });
    informer.start();
    await until("the first failure", () => informer.lastError !== undefined);
    await informer.synced();
    assert.equal(source.listCalls.length, 3);
    assert.equal(informer.lastError, undefined);
    await informer.stop();
  });

  void it("tells onRecovered once a relist that changes nothing ends a failure, and not when nothing failed", async () => {
    const source = new ScriptedSource();
    const unchanged = { items: [cm("a", "1")], resourceVersion: "2" };
    source.lists.push(unchanged, new Error("connection refused"), unchanged);
    source.watches.push(...[1, 2, 3].map(() => [new Error("connection refused")]));
    const told: string[] = [];
    const informer = new Informer(source, mapping, {
      onError: () => told.push("error"),
      onRecovered: () => told.push("recovered"),
      backoff: fast,
    });
    const log = record(informer);
    informer.start();
    await until("the recovery", () => told.includes("recovered"));
    assert.deepEqual(log, ["add a@1"], "the relist announced no object");
    assert.deepEqual(told, ["error", "error", "error", "error", "recovered"]);
    assert.equal(informer.lastError, undefined);
    await informer.stop();
  });

  void it("a watch the server accepts ends the failure before it, though no event comes (a quiet watch)", async () => {
    const source = new ScriptedSource();
    source.lists.push({ items: [cm("a", "1")], resourceVersion: "2" });
    source.watches.push([new Error("connection refused")], ["hang"]);
    const told: string[] = [];
    const informer = new Informer(source, mapping, {
      onError: () => told.push("error"),
      onRecovered: () => told.push("recovered"),
      backoff: fast,
    });
    informer.start();
    await until("the second watch", () => source.watchCalls.length === 2);
    assert.deepEqual(told, ["error", "recovered"]);
    assert.equal(informer.lastError, undefined, "a quiet, working watch still reported the failed one");
    assert.equal(informer.watchError, undefined, "an accepted watch still reported the refused one");
    assert.equal(source.listCalls.length, 1, "one failed watch does not relist");
    await informer.stop();
  });

  void it("a watch accepted, then answered 410 or cut before any event, does not end the watch's failing spell", async (t) => {
    const source = new ScriptedSource();
    source.lists.push({ items: [cm("a", "1")], resourceVersion: "2" }, new Error("list timed out"));
    source.watches.push([new Error("connection refused")], [new Error("stream reset")], [gone]);
    const informer = new Informer(source, mapping, { onError: () => undefined, backoff: fast });
    t.after(() => informer.stop());
    informer.start();
    await until("the second watch", () => source.watchCalls.length === 2);
    const since = informer.watchFailingSince;
    assert.ok(since !== undefined);
    // The third watch is accepted, then 410; the relist after it fails: the cache is still not current.
    // At least: under load the poll may first look after the backoff's next relist (which fails too).
    await until("the relist after the 410", () => source.listCalls.length >= 2 && informer.lastError !== undefined);
    assert.equal(informer.watchFailingSince, since, "a watch that brought only a 410 ended the failing spell");
  });

  void it("keeps a written-through copy against older watch events and does not re-announce it", async () => {
    const source = new ScriptedSource();
    source.lists.push({ items: [cm("a", "3")], resourceVersion: "10" });
    // The watch delivers its first event a macrotask after the list: the upsert lands before it.
    source.watches.push([
      { type: "MODIFIED", object: cm("a", "11", { v: "old" }) },
      { type: "MODIFIED", object: cm("a", "12", { v: "ours" }) },
      { type: "MODIFIED", object: cm("a", "13", { v: "theirs" }) },
    ]);
    const informer = new Informer(source, mapping);
    const log = record(informer);
    informer.start();
    await informer.synced();
    informer.upsert(cm("a", "12", { v: "ours" }));
    assert.deepEqual(informer.get("ns", "a")?.["data"], { v: "ours" });
    await until("the newer event", () => informer.get("ns", "a")?.metadata.resourceVersion === "13");
    assert.deepEqual(log, ["add a@3", "update a@12->13"]);
    await informer.stop();
  });

  void it("upsert keeps the newer resourceVersion, comparing as integers", () => {
    const informer = new Informer(new ScriptedSource(), mapping);
    informer.upsert(cm("a", "100", { v: "new" }));
    informer.upsert(cm("a", "99", { v: "old" }));
    assert.deepEqual(informer.get("ns", "a")?.["data"], { v: "new" });
    informer.upsert(cm("a", "1000", { v: "newer" })); // "1000" < "99" as strings
    assert.deepEqual(informer.get("ns", "a")?.["data"], { v: "newer" });
    informer.upsert(cm("a", "opaque", { v: "latest" })); // not an integer: the later arrival wins
    assert.deepEqual(informer.get("ns", "a")?.["data"], { v: "latest" });
    informer.forget("ns", "a");
    assert.equal(informer.get("ns", "a"), undefined);
  });

  void it("ignores a DELETED event older than a re-created copy it already holds", async () => {
    const source = new ScriptedSource();
    source.lists.push({ items: [cm("a", "3")], resourceVersion: "10" });
    source.watches.push([{ type: "DELETED", object: cm("a", "11") }]);
    const informer = new Informer(source, mapping);
    const log = record(informer);
    // Our own delete and re-create happened before the watch delivered the deletion.
    informer.upsert(cm("a", "12", { v: "recreated" }));
    informer.start();
    await until("the watch to drain", () => informer.resourceVersion === "11");
    assert.deepEqual(informer.get("ns", "a")?.["data"], { v: "recreated" });
    assert.deepEqual(log, []);
    await informer.stop();
  });

  void it("keeps objects written through after the list's snapshot when relisting", async () => {
    const source = new ScriptedSource();
    source.lists.push({ items: [], resourceVersion: "10" }, { items: [], resourceVersion: "20" });
    source.watches.push([gone]);
    const informer = new Informer(source, mapping, { onError: () => undefined, backoff: fast });
    informer.upsert(cm("ours", "25"));
    informer.upsert(cm("stale", "15"));
    informer.start();
    await until("the relist", () => source.listCalls.length === 2 && source.watchCalls.length === 2);
    assert.ok(informer.get("ns", "ours") !== undefined, "created after the snapshot: kept");
    assert.equal(informer.get("ns", "stale"), undefined, "older than the snapshot and absent from it: gone");
    await informer.stop();
  });

  void it("reports a handler's exception and still runs the other handlers", async () => {
    const source = new ScriptedSource();
    source.lists.push({ items: [cm("a", "1")], resourceVersion: "2" });
    const errors: Error[] = [];
    const informer = new Informer(source, mapping, { onError: (e) => errors.push(e) });
    const seen: string[] = [];
    informer.on("add", () => {
      throw new Error("handler bug");
    });
    const off = informer.on("add", (o) => seen.push(o.metadata.name));
    informer.start();
    await informer.synced();
    assert.deepEqual(seen, ["a"]);
    assert.equal(errors[0]?.message, "handler bug");
    off();
    await informer.stop();
  });

  void it("ends with its source: started on a closed client it lists and watches nothing, and one running ends its watch", async () => {
    const closedSource = new ScriptedSource();
    const closed = new AbortController();
    closed.abort();
    closedSource.closedSignal = closed.signal;
    closedSource.lists.push({ items: [cm("a", "1")], resourceVersion: "1" });
    const late = new Informer(closedSource, mapping, { backoff: fast });
    late.start();
    await assert.rejects(late.synced(), /its client is closed/);
    assert.deepEqual([closedSource.listCalls.length, closedSource.watchCalls.length], [0, 0]);

    const source = new ScriptedSource();
    const closing = new AbortController();
    source.closedSignal = closing.signal;
    source.lists.push({ items: [cm("a", "1")], resourceVersion: "1" });
    source.watches.push(["hang"]);
    const running = new Informer(source, mapping, { backoff: fast });
    running.start();
    await running.synced();
    await until("a watch", () => source.watchCalls.length === 1);
    closing.abort();
    await until("the watch to end", () => source.watchCalls[0]?.signal.aborted === true);
  });

  void it("rejects synced() when stopped before the first list, and stops a hanging watch", async () => {
    const source = new ScriptedSource();
    source.lists.push(new Error("down"), new Error("down"), new Error("down"));
    const informer = new Informer(source, mapping, {
      onError: () => undefined,
      backoff: { initialMs: 60_000, maxMs: 60_000 },
    });
    informer.start();
    await until("a list attempt", () => source.listCalls.length === 1);
    await informer.stop();
    await assert.rejects(informer.synced(), /stopped before its first list/);
    assert.throws(() => informer.start(), /cannot be restarted/);
  });
});

void describe("Informer transform option", () => {
  void it("caches and announces the transformed object, for listed, watched and written-through objects", async () => {
    const source = new ScriptedSource();
    const withFields = (name: string, rv: string): KubeObject => {
      const obj = cm(name, rv);
      (obj.metadata as { managedFields?: unknown }).managedFields = [{ manager: "kubectl" }];
      return obj;
    };
    source.lists.push({ items: [withFields("listed", "1")], resourceVersion: "1" });
    source.watches.push([{ type: "ADDED", object: withFields("watched", "2") }, "hang"]);
    const withoutManagedFields = (obj: KubeObject): KubeObject => {
      const { managedFields: _dropped, ...metadata } = obj.metadata;
      return { ...obj, metadata };
    };
    const informer = new Informer(source, mapping, { transform: withoutManagedFields });
    const announced: KubeObject[] = [];
    informer.on("add", (obj) => announced.push(obj));
    informer.start();
    await informer.synced();
    await until("the watched object", () => informer.get("ns", "watched") !== undefined);
    informer.upsert(withFields("written", "3"));
    for (const name of ["listed", "watched", "written"]) {
      assert.equal(informer.get("ns", name)?.metadata.managedFields, undefined, `${name} kept managedFields`);
    }
    assert.ok(announced.length >= 2 && announced.every((o) => o.metadata.managedFields === undefined));
    await informer.stop();
  });

  void it("pause closes the watch and keeps serving the cache; resume re-watches from where it stopped", async () => {
    const source = new ScriptedSource();
    source.lists.push({ items: [cm("a", "3")], resourceVersion: "10" });
    source.watches.push([{ type: "MODIFIED", object: cm("a", "11") }, "hang"]);
    source.watches.push(["hang"]);
    const informer = new Informer(source, mapping);
    const log = record(informer);
    informer.start();
    await until("the first event", () => log.length === 2);
    informer.pause();
    assert.equal(informer.paused, true);
    await until("the watch to close", () => source.watchCalls[0]?.signal.aborted === true);
    informer.upsert(cm("b", "12"));
    assert.equal(informer.get("ns", "b")?.metadata.resourceVersion, "12", "upserts go on while paused");
    assert.equal(informer.get("ns", "a")?.metadata.resourceVersion, "11");
    await tick();
    assert.equal(source.watchCalls.length, 1, "no watch while paused");
    informer.resume();
    await until("the second watch", () => source.watchCalls.length === 2);
    assert.equal(source.watchCalls[1]?.resourceVersion, "11", "from the last event seen");
    assert.equal(source.listCalls.length, 1, "no relist");
    assert.deepEqual(log, ["add a@3", "update a@3->11"]);
    await informer.stop();
  });

  void it("an informer paused before it starts lists once (synced) and watches only after resume", async () => {
    const source = new ScriptedSource();
    source.lists.push({ items: [cm("a", "3")], resourceVersion: "10" });
    source.watches.push(["hang"]);
    const informer = new Informer(source, mapping);
    informer.pause();
    informer.start();
    await informer.synced();
    assert.equal(informer.get("ns", "a")?.metadata.resourceVersion, "3");
    for (let i = 0; i < 5; i++) await tick();
    assert.equal(source.watchCalls.length, 0);
    informer.resume();
    await until("the watch", () => source.watchCalls.length === 1);
    assert.equal(source.watchCalls[0]?.resourceVersion, "10");
    await informer.stop();
  });

  void it("recognises the echo of its own write by version, once, and forgets echoes at a relist", async () => {
    const source = new ScriptedSource();
    source.lists.push({ items: [], resourceVersion: "10" });
    source.watches.push(["hang"]);
    // After a pause, the re-watch is told 410: the informer relists.
    source.watches.push([gone]);
    source.lists.push({ items: [], resourceVersion: "30" });
    source.watches.push(["hang"]);
    const informer = new Informer(source, mapping, { backoff: fast, onError: () => undefined });
    informer.start();
    await until("the watch", () => source.watchCalls.length === 1);
    const isEcho = source.watchCalls[0]?.isEcho;
    assert.ok(isEcho !== undefined);
    informer.upsert(cm("a", "11"));
    informer.upsert(cm("b", "12"));
    informer.upsert(cm("a", "9")); // older than what we hold: not stored, so not awaited either
    assert.equal(isEcho("11"), true);
    assert.equal(isEcho("11"), false, "an echo comes once");
    assert.equal(isEcho("9"), false);
    assert.equal(isEcho("13"), false, "someone else's write");
    informer.pause();
    informer.resume();
    await until("the watch after the relist", () => source.watchCalls.length === 3);
    assert.equal(source.listCalls.length, 2);
    assert.equal(source.watchCalls[2]?.isEcho?.("12"), false, "the relist superseded it");
    await informer.stop();
  });

  void it("stop while paused ends the informer", async () => {
    const source = new ScriptedSource();
    source.lists.push({ items: [], resourceVersion: "10" });
    source.watches.push(["hang"]);
    const informer = new Informer(source, mapping);
    informer.start();
    await until("the watch", () => source.watchCalls.length === 1);
    informer.pause();
    await informer.stop();
    assert.equal(source.watchCalls.length, 1);
    assert.equal(source.watchCalls[0]?.signal.aborted, true);
  });

  void it("with onNotFound, a 404 ends the informer instead of retrying (the type's CRD was deleted)", async () => {
    const notFound = (): KubeApiError =>
      new KubeApiError({
        status: 404,
        reason: "NotFound",
        operation: "watch gadgets",
        serverMessage: "404 page not found",
      });
    const source = new ScriptedSource();
    source.lists.push({ items: [cm("a", "10")], resourceVersion: "10" });
    source.watches.push([notFound()], [notFound()], [notFound()]);
    const errors: Error[] = [];
    const gone: Error[] = [];
    const informer = new Informer(source, mapping, {
      onError: (error) => errors.push(error),
      onNotFound: (error) => gone.push(error),
      backoff: { initialMs: 1, maxMs: 1 },
    });
    informer.start();
    await until("the 404", () => gone.length === 1);
    await informer.stop();
    assert.equal(source.watchCalls.length, 1, "watched again after the 404");
    assert.deepEqual(errors, []);

    // Before the first list: synced() rejects with the 404.
    const unlisted = new ScriptedSource();
    unlisted.lists.push(notFound(), { items: [], resourceVersion: "1" });
    const never = new Informer(unlisted, mapping, { onNotFound: () => undefined });
    never.start();
    await assert.rejects(never.synced(), /404 page not found/);
    assert.equal(unlisted.listCalls.length, 1);
    await never.stop();
  });
});
