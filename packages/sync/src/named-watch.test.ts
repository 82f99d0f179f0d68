import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeClient, KubeObject, ListOptions, ListPage, WatchEvent, WatchOptions } from "@driftless/kube";
import { createLogger } from "./log.ts";
import { SecretWatch } from "./secret-watch.ts";

/** Lists `items` once, then streams what the test sends until the watch is stopped. */
class ScriptedServer {
  readonly #waiting: ((event: WatchEvent) => void)[] = [];
  readonly #sent: WatchEvent[] = [];
  listed = false;

  readonly items: KubeObject[];

  constructor(items: KubeObject[]) {
    this.items = items;
  }

  async *listPages(_m: unknown, _opts: ListOptions): AsyncGenerator<ListPage> {
    this.listed = true;
    yield await Promise.resolve({ items: this.items, resourceVersion: "10", restart: false });
  }

  async *watch(_m: unknown, opts: WatchOptions): AsyncGenerator<WatchEvent> {
    const aborted = new Promise<undefined>((resolve) =>
      opts.signal.addEventListener("abort", () => resolve(undefined), { once: true }),
    );
    for (;;) {
      const next =
        this.#sent.shift() ?? (await Promise.race([new Promise<WatchEvent>((r) => this.#waiting.push(r)), aborted]));
      if (next === undefined) return;
      yield next;
    }
  }

  send(event: WatchEvent): void {
    const waiter = this.#waiting.shift();
    if (waiter === undefined) this.#sent.push(event);
    else waiter(event);
  }
}

function secret(resourceVersion: string): KubeObject {
  return { apiVersion: "v1", kind: "Secret", metadata: { name: "creds", namespace: "team", resourceVersion } };
}

/** Waits for `condition`, failing after 5 s of it never holding (the watch saw nothing). */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    assert.ok(Date.now() < deadline, "not met within 5 s");
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function watchOf(server: ScriptedServer, reasons: string[]): SecretWatch {
  const log = createLogger({}, { level: "error", write: () => undefined });
  return new SecretWatch(server as unknown as KubeClient, "team", (reason) => reasons.push(reason), log);
}

test("a Secret created after the pass found it missing, but before the watch's first list, asks for a pass", async () => {
  const server = new ScriptedServer([secret("7")]);
  const reasons: string[] = [];
  const watch = watchOf(server, reasons);
  watch.read("creds", undefined);
  await watch.follow(["creds"]);
  await until(() => reasons.length > 0);
  assert.deepEqual(reasons, ["Secret team/creds created"]);
  assert.equal(watch.changes, 1);
  await watch.stop();
});

test("a Secret at the version the pass read is no change; a later version and its deletion are", async () => {
  const server = new ScriptedServer([secret("7")]);
  const reasons: string[] = [];
  const watch = watchOf(server, reasons);
  await watch.follow(["creds"]);
  watch.read("creds", secret("7"));
  await until(() => server.listed);
  server.send({ type: "MODIFIED", object: secret("8") });
  await until(() => reasons.length > 0);
  server.send({ type: "DELETED", object: secret("9") });
  await until(() => reasons.length > 1);
  assert.deepEqual(reasons, ["Secret team/creds changed", "Secret team/creds deleted"]);
  assert.equal(watch.changes, 2);
  await watch.stop();
});
