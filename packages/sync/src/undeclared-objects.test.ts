import assert from "node:assert/strict";
import { setImmediate as tick } from "node:timers/promises";
import { describe, it } from "node:test";
import {
  configMapMapping,
  type KubeClient,
  type KubeObject,
  type ListOptions,
  type ListPage,
  type ResourceMapping,
  type WatchEvent,
  type WatchOptions,
} from "@driftless/kube";
import { InformerLiveState } from "./live-cache.ts";
import { maxUndeclaredKeys } from "./undeclared-objects.ts";

let version = 100;
const configMap = (name: string): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "team", resourceVersion: String(++version) },
});

/** Lists `listed`; the open watch delivers what `send` pushes. */
class ScriptedSource {
  listed: KubeObject[] = [];
  lists = 0;
  private pending: WatchEvent[] = [];
  private wake: (() => void) | undefined;
  private watching = false;

  async *listPages(_m: ResourceMapping, _opts: ListOptions): AsyncGenerator<ListPage> {
    this.lists++;
    yield { items: this.listed.slice(0, this.listed.length / 2), resourceVersion: "10", restart: false };
    yield { items: this.listed.slice(this.listed.length / 2), resourceVersion: "10", restart: false };
  }

  async *watch(_m: ResourceMapping, opts: WatchOptions): AsyncGenerator<WatchEvent> {
    this.watching = true;
    opts.signal.addEventListener("abort", () => this.wake?.(), { once: true });
    while (!opts.signal.aborted) {
      const event = this.pending.shift();
      if (event !== undefined) {
        yield event;
        continue;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    this.watching = false;
  }

  send(type: "ADDED" | "MODIFIED" | "DELETED", object: KubeObject): void {
    this.pending.push({ type, object });
    this.wake?.();
  }

  /** Ends the watch with a 410, so the informer relists. */
  expire(): void {
    this.pending.push({ type: "ERROR", object: { status: "Failure", code: 410, reason: "Expired", message: "gone" } });
    this.wake?.();
  }

  get open(): boolean {
    return this.watching;
  }
}

async function until(what: string, condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await tick();
  }
}

const declared = (...names: string[]) =>
  names.map((name) => ({ id: { group: "", kind: "ConfigMap", namespace: "team", name }, apiVersion: "v1" }));

function liveState(source: ScriptedSource): InformerLiveState {
  return new InformerLiveState(source as unknown as KubeClient, {
    sync: { kind: "RepoSync", namespace: "team", name: "repo-sync" },
    namespace: "team",
  });
}

const undeclared = (live: InformerLiveState): number | undefined => live.undeclaredByType().get("ConfigMap");

void describe("InformerLiveState's undeclared objects", () => {
  void it("counts labelled objects the declaration leaves out as a current number: deletions and declarations leave it, nothing is cached", async (t) => {
    const source = new ScriptedSource();
    source.listed = [configMap("mine"), configMap("forged-0"), configMap("forged-1")];
    const live = liveState(source);
    t.after(() => live.stop());
    // A restart: before the first declaration, what the stored inventory records is cached, the rest counted.
    live.keepInventory([{ group: "", kind: "ConfigMap", namespace: "team", name: "mine" }]);
    await live.get(configMapMapping, "team", "mine");
    assert.equal(undeclared(live), 2, "before the first declaration the forged objects are counted");
    assert.equal(live.size, 1, "before the first declaration the forged objects stay out of the cache");

    live.declare(declared("mine"));
    assert.equal(undeclared(live), 2);
    assert.equal(live.size, 1, "the forged objects stay out of the cache");
    await until("the watch", () => source.open);

    source.send("ADDED", configMap("forged-2"));
    source.send("MODIFIED", configMap("forged-2")); // counted once, not per event
    await until("three undeclared", () => undeclared(live) === 3);
    source.send("DELETED", configMap("forged-0")); // deleted, or its label removed: out of the selector
    await until("two undeclared", () => undeclared(live) === 2);
    assert.equal(live.size, 1);

    live.declare(declared("mine", "forged-1")); // Git declares it now: the pass adopts it
    assert.equal(undeclared(live), 1);
  });

  void it("does not count what the last pass declared and this one leaves to its prune", async (t) => {
    const source = new ScriptedSource();
    source.listed = [configMap("a"), configMap("b")];
    const live = liveState(source);
    t.after(() => live.stop());
    live.declare(declared("a", "b"));
    await live.get(configMapMapping, "team", "a");
    await until("the watch", () => source.open);

    live.declare(declared("a")); // b left Git: this sync prunes it
    source.send("MODIFIED", { ...configMap("b"), metadata: { ...configMap("b").metadata, deletionTimestamp: "now" } });
    await tick();
    assert.equal(undeclared(live), 0);
    source.send("DELETED", configMap("b"));
    source.send("ADDED", configMap("forged"));
    await until("the forged one", () => undeclared(live) === 1);
  });

  void it("takes a relist's count: what went away while the watch was down leaves it", async (t) => {
    const source = new ScriptedSource();
    source.listed = [configMap("mine"), configMap("forged-0"), configMap("forged-1"), configMap("forged-2")];
    const live = liveState(source);
    t.after(() => live.stop());
    live.declare(declared("mine"));
    await live.get(configMapMapping, "team", "mine");
    assert.equal(undeclared(live), 3);
    await until("the watch", () => source.open);

    source.listed = [configMap("mine"), configMap("forged-2")];
    source.expire();
    await until("the relist", () => source.lists === 2 && undeclared(live) === 1);
    assert.equal(live.size, 1);
  });

  void it(`remembers at most ${maxUndeclaredKeys} keys a type`, async (t) => {
    const source = new ScriptedSource();
    source.listed = [configMap("mine")];
    for (let i = 0; i <= maxUndeclaredKeys; i++) source.listed.push(configMap(`forged-${i}`));
    const live = liveState(source);
    t.after(() => live.stop());
    live.declare(declared("mine"));
    await live.get(configMapMapping, "team", "mine");
    assert.equal(undeclared(live), maxUndeclaredKeys);
    assert.equal(live.size, 1);
  });
});
