import assert from "node:assert/strict";
import { test } from "node:test";
import { KubeApiError, isGone, type WatchEvent } from "@driftless/kube";
import { eventually, testNamespace } from "../../support/index.ts";
import { adminClient, configMap, configMaps, throwawayCrd, widget } from "./support.ts";

void test("list follows continue tokens when the page is smaller than the collection", async (t) => {
  const client = await adminClient(t);
  const ns = await testNamespace(t, "kube-page");
  const names = Array.from({ length: 25 }, (_, i) => `cm-${String(i).padStart(2, "0")}`);
  await Promise.all(names.map((name) => client.create(configMaps, configMap(ns, name, { i: name }))));

  const listsBefore = client.requests.count("list");
  const { items, resourceVersion } = await client.list(configMaps, { namespace: ns, pageSize: 10 });
  assert.equal(client.requests.count("list") - listsBefore, 3, "25 items in pages of 10");
  assert.deepEqual(items.map((i) => i.metadata.name).sort(), names);
  assert.ok(
    items.every((i) => i.kind === "ConfigMap" && i.apiVersion === "v1"),
    "kind and apiVersion are filled in on list items",
  );
  assert.match(resourceVersion, /^\d+$/);

  const selected = await client.list(configMaps, { namespace: ns, fieldSelector: "metadata.name=cm-07" });
  assert.deepEqual(
    selected.items.map((i) => i.metadata.name),
    ["cm-07"],
  );
});

void test("a watch from a list's resourceVersion sees ADDED, MODIFIED and DELETED in order", async (t) => {
  const client = await adminClient(t);
  const ns = await testNamespace(t, "kube-watch");
  const { resourceVersion } = await client.list(configMaps, { namespace: ns });
  const abort = new AbortController();
  t.after(() => abort.abort());
  const events: WatchEvent[] = [];
  const consumed = (async () => {
    for await (const event of client.watch(configMaps, { namespace: ns, resourceVersion, signal: abort.signal }))
      events.push(event);
  })();

  const created = await client.create(configMaps, configMap(ns, "w", { v: "1" }));
  await client.replace(configMaps, { ...created, data: { v: "2" } });
  await client.delete(configMaps, ns, "w");
  await eventually(() => events.some((e) => e.type === "DELETED"), { timeoutMs: 10_000, what: "the DELETED event" });
  abort.abort();
  await consumed;

  const seen = events
    .filter((e) => e.type !== "BOOKMARK")
    .map((e) =>
      e.type === "ERROR" ? "ERROR" : `${e.type} ${e.object.metadata.name} ${JSON.stringify(e.object["data"])}`,
    );
  assert.deepEqual(seen, ['ADDED w {"v":"1"}', 'MODIFIED w {"v":"2"}', 'DELETED w {"v":"2"}']);
});

void test("a watch from a resourceVersion older than the server keeps ends in an ERROR 410 (Expired)", async (t) => {
  const client = await adminClient(t);
  const ns = await testNamespace(t, "kube-gone");
  // A new resource type's watch cache starts at its creation: resourceVersion 1 predates it.
  const widgets = await throwawayCrd(t, client);
  await client.create(widgets, widget(widgets, ns, "w", 1));
  const abort = new AbortController();
  t.after(() => abort.abort());
  const events: WatchEvent[] = [];
  for await (const event of client.watch(widgets, { namespace: ns, resourceVersion: "1", signal: abort.signal })) {
    events.push(event);
    if (event.type === "ERROR") break;
  }
  const last = events.at(-1);
  assert.ok(last?.type === "ERROR", `expected an ERROR event, got ${JSON.stringify(events.map((e) => e.type))}`);
  const error = KubeApiError.fromStatus(last.object, 0, "watch widgets");
  assert.ok(isGone(error), `expected 410, got ${error.status} ${error.reason}`);
  assert.equal(error.reason, "Expired");
});
