import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";
import { test } from "node:test";
import {
  Informer,
  isGone,
  type KubeClient,
  type ListOptions,
  type ListWatchSource,
  type ResourceMapping,
  type WatchEvent,
  type WatchOptions,
} from "@driftless/kube";
import { eventually, testNamespace } from "../../support/index.ts";
import { adminClient, configMap, configMaps, throwawayCrd, widget } from "./support.ts";

function record(informer: Informer): string[] {
  const log: string[] = [];
  informer.on("add", (o) => log.push(`add ${o.metadata.name}`));
  informer.on("update", (o) => log.push(`update ${o.metadata.name}`));
  informer.on("delete", (o) => log.push(`delete ${o.metadata.name}`));
  return log;
}

void test("an informer syncs, then sees a create, an update and a delete each within a second", async (t) => {
  const client = await adminClient(t);
  const ns = await testNamespace(t, "kube-inf");
  await client.create(configMaps, configMap(ns, "before", { v: "0" }));
  const informer = new Informer(client, configMaps, { namespace: ns });
  t.after(() => informer.stop());
  const log = record(informer);
  informer.start();
  await informer.synced();
  assert.deepEqual(
    informer.list().map((o) => o.metadata.name),
    ["before"],
  );

  const within = { timeoutMs: 1000, intervalMs: 10 };
  const created = await client.create(configMaps, configMap(ns, "a", { v: "1" }));
  await eventually(() => informer.get(ns, "a") !== undefined, { ...within, what: "the create" });
  await client.replace(configMaps, { ...created, data: { v: "2" } });
  await eventually(() => (informer.get(ns, "a")?.["data"] as { v?: string } | undefined)?.v === "2", {
    ...within,
    what: "the update",
  });
  await client.delete(configMaps, ns, "a");
  await eventually(() => informer.get(ns, "a") === undefined, { ...within, what: "the delete" });
  assert.deepEqual(log, ["add before", "add a", "update a", "delete a"]);
  assert.equal(informer.lastError, undefined);

  const stopping = performance.now();
  await informer.stop();
  assert.ok(performance.now() - stopping < 1000, "stop() ends the open watch at once");
});

void test("when the server ends each watch, the informer re-watches from its resourceVersion without relisting or missing a change", async (t) => {
  const client = await adminClient(t);
  const ns = await testNamespace(t, "kube-rewatch");
  const errors: Error[] = [];
  // The server closes every watch after one second.
  const informer = new Informer(client, configMaps, {
    namespace: ns,
    watchTimeoutSeconds: 1,
    onError: (e) => errors.push(e),
  });
  t.after(() => informer.stop());
  informer.start();
  await informer.synced();
  await eventually(() => client.requests.count("watch") === 1, { what: "the first watch" });

  for (let i = 0; i < 3; i++) {
    const watches = client.requests.count("watch");
    await eventually(() => client.requests.count("watch") > watches, {
      timeoutMs: 10_000,
      what: `watch ${watches + 1}`,
    });
    await client.create(configMaps, configMap(ns, `after-rewatch-${i}`));
  }
  await eventually(() => informer.list().length === 3, { timeoutMs: 5000, what: "all three objects" });
  assert.equal(client.requests.count("list"), 1, "no relist");
  assert.ok(client.requests.count("watch") >= 4);
  assert.deepEqual(errors, []);
});

/**
 * The real client, except that one re-watch is held until the test releases it and is then sent
 * with resourceVersion 1, which the server no longer has: it answers 410 like it does after a
 * compaction or a long disconnect.
 */
class ExpiringSource implements ListWatchSource {
  readonly paused = Promise.withResolvers<void>();
  readonly release = Promise.withResolvers<void>();
  #watches = 0;
  readonly #client: KubeClient;

  constructor(client: KubeClient) {
    this.#client = client;
  }

  listPages(m: ResourceMapping, opts: ListOptions): ReturnType<KubeClient["listPages"]> {
    return this.#client.listPages(m, opts);
  }

  async *watch(m: ResourceMapping, opts: WatchOptions): AsyncGenerator<WatchEvent> {
    this.#watches += 1;
    if (this.#watches !== 2) {
      yield* this.#client.watch(m, opts);
      return;
    }
    this.paused.resolve();
    await this.release.promise;
    yield* this.#client.watch(m, { ...opts, resourceVersion: "1" });
  }
}

void test("after a real 410 the informer relists and announces what changed while it was away", async (t) => {
  const client = await adminClient(t);
  const ns = await testNamespace(t, "kube-relist");
  const widgets = await throwawayCrd(t, client);
  await client.create(widgets, widget(widgets, ns, "deleted-meanwhile", 1));
  const changed = await client.create(widgets, widget(widgets, ns, "changed-meanwhile", 1));
  await client.create(widgets, widget(widgets, ns, "unchanged", 1));

  const source = new ExpiringSource(client);
  const errors: Error[] = [];
  const informer = new Informer(source, widgets, {
    namespace: ns,
    watchTimeoutSeconds: 1,
    onError: (e) => errors.push(e),
  });
  t.after(() => informer.stop());
  informer.start();
  await informer.synced();
  const log = record(informer);

  await source.paused.promise; // the first watch ended; the informer is "away"
  await client.delete(widgets, ns, "deleted-meanwhile");
  await client.replace(widgets, { ...changed, spec: { size: 2 } });
  await client.create(widgets, widget(widgets, ns, "created-meanwhile", 1));
  source.release.resolve();

  await eventually(() => log.length === 3, { timeoutMs: 10_000, what: "three changes announced" });
  assert.deepEqual(log.sort(), ["add created-meanwhile", "delete deleted-meanwhile", "update changed-meanwhile"]);
  assert.ok(
    errors.some((e) => isGone(e)),
    `the server said 410: ${errors.map((e) => e.message).join("; ")}`,
  );
  assert.equal(client.requests.count("list"), 2, "one relist");
  assert.deepEqual(
    informer
      .list()
      .map((o) => o.metadata.name)
      .sort(),
    ["changed-meanwhile", "created-meanwhile", "unchanged"],
  );

  // And it keeps watching from the relist.
  await client.create(widgets, widget(widgets, ns, "later", 1));
  await eventually(() => informer.get(ns, "later") !== undefined, {
    timeoutMs: 5000,
    what: "a change after the relist",
  });
});

void test("a watch outlives the agent's idle-socket timeout", async (t) => {
  const client = await adminClient(t, { idleSocketTimeoutMs: 200 });
  const ns = await testNamespace(t, "kube-idle");
  const errors: Error[] = [];
  const informer = new Informer(client, configMaps, { namespace: ns, onError: (e) => errors.push(e) });
  t.after(() => informer.stop());
  informer.start();
  await informer.synced();
  await eventually(() => client.requests.count("watch") === 1, { what: "the watch to open" });
  // Not synchronisation: the scenario is a watch that stays silent for 5x the idle timeout.
  await delay(1000);
  await client.create(configMaps, configMap(ns, "after-silence"));
  // Not a latency bound (a loaded machine may take seconds): a watch the silence ended would be a second watch.
  await eventually(() => informer.get(ns, "after-silence") !== undefined, {
    timeoutMs: 10_000,
    intervalMs: 10,
    what: "the event after the silence",
  });
  assert.equal(client.requests.count("watch"), 1, "the same watch delivered it");
  assert.deepEqual(errors, []);
});

void test("a closed client opens no watch: an informer started on it ends without a list, and one running stops watching", async (t) => {
  const ns = await testNamespace(t, "kube-closed");
  const client = await adminClient(t);
  const running = new Informer(client, configMaps, { namespace: ns });
  running.start();
  await running.synced();
  await eventually(() => client.requests.count("watch") === 1, { what: "the running informer's watch" });
  client.close();
  const late = new Informer(client, configMaps, { namespace: ns });
  late.start();
  await assert.rejects(late.synced(), /its client is closed/);
  // A watch on the closed client ends at once, with no connection opened.
  for await (const event of client.watch(configMaps, {
    namespace: ns,
    resourceVersion: "0",
    signal: new AbortController().signal,
  }))
    assert.fail(`an event on a closed client: ${event.type}`);
  assert.equal(client.requests.count("watch"), 1, "a watch was opened after close()");
  assert.equal(client.requests.count("list"), 1, "a list was made after close()");
  await running.stop();
  await late.stop();
});
