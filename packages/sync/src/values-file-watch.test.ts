import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeClient, ListOptions, ListPage, WatchEvent, WatchOptions } from "@driftless/kube";
import { createLogger } from "./log.ts";
import { maxWatchedValuesFiles, ValuesFileWatch } from "./values-file-watch.ts";

/** Lists nothing and holds each watch open until it is stopped; counts the watches open now. */
class QuietServer {
  open = 0;
  readonly selectors = new Set<string>();

  async *listPages(_m: unknown, opts: ListOptions): AsyncGenerator<ListPage> {
    this.selectors.add(opts.fieldSelector ?? "");
    yield await Promise.resolve({ items: [], resourceVersion: "1", restart: false });
  }

  async *watch(_m: unknown, opts: WatchOptions): AsyncGenerator<WatchEvent> {
    this.open++;
    try {
      await new Promise((resolve) => opts.signal.addEventListener("abort", resolve, { once: true }));
    } finally {
      this.open--;
    }
    yield* [];
  }
}

test("watches at most maxWatchedValuesFiles ConfigMaps of a spec naming more, and none once stopped", async () => {
  const server = new QuietServer();
  const watch = new ValuesFileWatch(
    server as unknown as KubeClient,
    "team",
    () => undefined,
    createLogger({}, { level: "error", write: () => undefined }),
  );
  const names = Array.from({ length: 1_000 }, (_, i) => `values-${i}`);
  await watch.follow(names);
  await new Promise((resolve) => setImmediate(resolve));
  while (server.open < maxWatchedValuesFiles) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(server.open, maxWatchedValuesFiles);
  assert.equal(server.selectors.size, maxWatchedValuesFiles);
  assert.ok(server.selectors.has("metadata.name=values-0"));
  await watch.stop();
  assert.equal(server.open, 0);
});
