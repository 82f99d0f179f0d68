import assert from "node:assert/strict";
import { setImmediate as tick } from "node:timers/promises";
import { describe, it } from "node:test";
import { hasRecordDigest, type PlanOutline } from "@driftless/applier";
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
import { Annotator } from "@driftless/objectmatcher";
import { InformerLiveState } from "./live-cache.ts";

/** Lists nothing; every watch stays open until aborted. Records which watches are open. */
class QuietSource {
  lists = 0;
  readonly watches: AbortSignal[] = [];

  async *listPages(_m: ResourceMapping, _opts: ListOptions): AsyncGenerator<ListPage> {
    this.lists++;
    yield { items: [], resourceVersion: "10", restart: false };
  }

  async *watch(_m: ResourceMapping, opts: WatchOptions): AsyncGenerator<WatchEvent> {
    this.watches.push(opts.signal);
    await new Promise<void>((resolve) => opts.signal.addEventListener("abort", () => resolve(), { once: true }));
  }

  get open(): number {
    return this.watches.filter((s) => !s.aborted).length;
  }
}

async function until(what: string, condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await tick();
  }
}

const outline = (objects: number, keepWatching = false): PlanOutline => ({
  objectsOf: () => objects,
  keepWatching: () => keepWatching,
});

let version = 10;
function written(name: string): KubeObject {
  const object: KubeObject = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: "team", resourceVersion: String(++version) },
    // Long enough for a record the cache keeps as a digest (record-digest.ts keeps short ones as they are).
    data: { a: "1", description: "a config map whose record is long enough to be digested in the cache" },
  };
  new Annotator().setLastAppliedAnnotation(object);
  return object;
}

function liveState(source: QuietSource): InformerLiveState {
  return new InformerLiveState(source as unknown as KubeClient, {
    sync: { kind: "RepoSync", namespace: "team", name: "repo-sync" },
    namespace: "team",
    recordAnnotation: new Annotator().annotationKey,
  });
}

void describe("InformerLiveState during a plan", () => {
  void it("stops watching a type a bulk plan writes, from its first write until the plan is done", async (t) => {
    const source = new QuietSource();
    const live = liveState(source);
    t.after(() => live.stop());
    await live.get(configMapMapping, "team", "warm"); // the informer exists before the plan, watching
    await until("the watch", () => source.open === 1);

    const done = live.applyingPlan(outline(150));
    await live.get(configMapMapping, "team", "a");
    assert.equal(source.open, 1, "a read alone must not pause the watch (a resync writes nothing)");
    live.remember(configMapMapping, written("a"));
    await until("the watch to close", () => source.open === 0);
    done();
    await until("the watch to resume", () => source.open === 1);
    assert.equal(source.watches.length, 2);
    assert.equal(source.lists, 1, "resuming must not relist");
  });

  void it("keeps watching through a small plan and for types the plan waits on", async (t) => {
    for (const plan of [outline(99), outline(5000, true)]) {
      const source = new QuietSource();
      const live = liveState(source);
      t.after(() => live.stop());
      const done = live.applyingPlan(plan);
      await live.get(configMapMapping, "team", "a");
      await until("the watch", () => source.open === 1);
      live.remember(configMapMapping, written("a"));
      live.remember(configMapMapping, written("b"));
      await tick();
      assert.equal(source.open, 1);
      done();
      assert.equal(source.watches.length, 1);
    }
  });

  void it("lists a type a bulk plan starts, and watches it only once the plan is done", async (t) => {
    const source = new QuietSource();
    const live = liveState(source);
    t.after(() => live.stop());
    const done = live.applyingPlan(outline(1000));
    assert.equal(await live.get(configMapMapping, "team", "a"), undefined);
    assert.equal(source.lists, 1);
    live.remember(configMapMapping, written("a"));
    await tick();
    assert.equal(source.watches.length, 0, "the plan's type was watched during the plan");
    assert.equal((await live.get(configMapMapping, "team", "a"))?.metadata.name, "a");
    done();
    await until("the watch after the plan", () => source.open === 1);
  });
});

void describe("InformerLiveState declarations", () => {
  void it("counts objects set aside for their kind (KNV1021) as declared: their type going is not this sync dropping it", (t) => {
    const live = liveState(new QuietSource());
    t.after(() => live.stop());
    const anvils = { ...configMapMapping, group: "acme.com", resource: "anvils", kind: "Anvil" };
    const heavy = { group: "acme.com", kind: "Anvil", namespace: "team", name: "heavy" };
    live.declare([], [heavy]);
    assert.equal(live.declares(anvils), true);
    live.declare([]);
    assert.equal(live.declares(anvils), false);
  });

  void it("stops watching a type at a version it is no longer declared at, and keeps the declared one", async (t) => {
    const source = new QuietSource();
    const live = liveState(source);
    t.after(() => live.stop());
    const v1 = { ...configMapMapping, group: "autoscaling", kind: "HorizontalPodAutoscaler", version: "v1" };
    const v2 = { ...v1, version: "v2" };
    const hpa = { id: { group: "autoscaling", kind: "HorizontalPodAutoscaler", namespace: "team", name: "web" } };
    live.declare([{ ...hpa, apiVersion: "autoscaling/v1" }]);
    await live.get(v1, "team", "web");
    await until("the v1 watch", () => source.open === 1);
    // The object moves to autoscaling/v2: its v2 watch starts, the v1 watch ends.
    live.declare([{ ...hpa, apiVersion: "autoscaling/v2" }]);
    await live.get(v2, "team", "web");
    await until("only the v2 watch", () => source.open === 1 && source.watches.length === 2);
    assert.equal(source.watches[0]?.aborted, true, "the watch of the version the object left still runs");
    // A type no longer declared at all is not stopped here: pruning its objects still reads it.
    live.declare([]);
    await tick();
    assert.equal(source.open, 1);
  });

  void it("after the prune stops watching a type neither declared nor in the inventory, and watches it anew once declared again", async (t) => {
    const source = new QuietSource();
    const unwatched: string[] = [];
    const live = new InformerLiveState(source as unknown as KubeClient, {
      sync: { kind: "RepoSync", namespace: "team", name: "repo-sync" },
      namespace: "team",
      onTypesUnwatched: (stopped) => unwatched.push(...stopped.map((m) => m.resource)),
    });
    t.after(() => live.stop());
    const secrets = { ...configMapMapping, kind: "Secret", resource: "secrets" };
    const cm = { id: { group: "", kind: "ConfigMap", namespace: "team", name: "a" }, apiVersion: "v1" };
    const secret = { id: { group: "", kind: "Secret", namespace: "team", name: "s" }, apiVersion: "v1" };
    live.declare([cm, secret]);
    await live.get(configMapMapping, "team", "a");
    await live.get(secrets, "team", "s");
    await until("both watches", () => source.open === 2);

    // Both leave the declaration; the prune left the Secret in the inventory (finalizers hold it).
    live.declare([]);
    live.unwatchUnused([secret.id]);
    await until("the ConfigMap watch to end", () => source.open === 1);
    assert.deepEqual(
      live.watchedTypes().map((m) => m.resource),
      ["secrets"],
    );
    assert.deepEqual(unwatched, ["configmaps"]);
    live.unwatchUnused([]);
    await until("the Secret watch to end", () => source.open === 0);
    assert.deepEqual(live.watchedTypes(), []);

    live.declare([cm]);
    await live.get(configMapMapping, "team", "a");
    await until("a new ConfigMap watch", () => source.open === 1 && source.watches.length === 3);
    assert.equal(source.lists, 3, "a type declared again is listed again");
  });
});

void describe("InformerLiveState when a type's CRD goes", () => {
  void it("tells a type whose watch ended with its CRD unwatched once the declaration drops it, and only then", async (t) => {
    const source = new QuietSource();
    const unwatched: string[] = [];
    const live = new InformerLiveState(source as unknown as KubeClient, {
      sync: { kind: "RepoSync", namespace: "team", name: "repo-sync" },
      namespace: "team",
      onTypesUnwatched: (stopped) => unwatched.push(...stopped.map((m) => m.resource)),
    });
    t.after(() => live.stop());
    const anvils = { ...configMapMapping, group: "acme.com", kind: "Anvil", resource: "anvils" };
    const heavy = {
      id: { group: "acme.com", kind: "Anvil", namespace: "team", name: "heavy" },
      apiVersion: "acme.com/v1",
    };
    live.declare([heavy]);
    await live.get(anvils, "team", "heavy");
    await live.stopWatching("acme.com", "anvils");
    assert.deepEqual(live.watchedTypes(), []);
    // Still declared: its CRD may come back, and whatever follows the type (the CRD watch) stays.
    live.unwatchUnused([]);
    assert.deepEqual(unwatched, []);
    live.declare([]);
    live.unwatchUnused([]);
    assert.deepEqual(unwatched, ["anvils"]);
    live.unwatchUnused([]);
    assert.deepEqual(unwatched, ["anvils"], "told once");
  });
});

/** Lists the given ConfigMaps; every watch stays open until aborted. */
class ListingSource extends QuietSource {
  private readonly names: readonly string[];

  constructor(names: readonly string[]) {
    super();
    this.names = names;
  }

  override async *listPages(_m: ResourceMapping, _opts: ListOptions): AsyncGenerator<ListPage> {
    this.lists++;
    const items = this.names.map((name) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace: "team", resourceVersion: "5" },
    }));
    yield { items, resourceVersion: "10", restart: false };
  }
}

void describe("InformerLiveState before the first declaration", () => {
  void it("caches only what the stored inventory records and counts the rest as undeclared", async (t) => {
    const source = new ListingSource(["kept", "forged-1", "forged-2"]);
    const live = liveState(source);
    t.after(() => live.stop());
    live.keepInventory([{ group: "", kind: "ConfigMap", namespace: "team", name: "kept" }]);
    live.prepare([configMapMapping]);
    assert.equal((await live.get(configMapMapping, "team", "kept"))?.metadata.name, "kept");
    assert.equal(live.size, 1);
    assert.deepEqual(live.undeclaredByType(), new Map([["ConfigMap", 2]]));

    // The first declaration drops what the inventory held and it does not: this sync prunes it, not counted.
    live.declare([]);
    assert.equal(live.size, 0);
    assert.deepEqual(live.undeclaredByType(), new Map([["ConfigMap", 2]]));
    live.keepInventory([{ group: "", kind: "ConfigMap", namespace: "team", name: "forged-1" }]);
    assert.equal(live.size, 0, "an inventory read after a declaration replaced it");
  });

  void it("caches nothing before it knows a declaration or an inventory", async (t) => {
    const source = new ListingSource(["a", "b"]);
    const live = liveState(source);
    t.after(() => live.stop());
    live.prepare([configMapMapping]);
    assert.equal(await live.get(configMapMapping, "team", "a"), undefined);
    assert.equal(live.size, 0);
  });
});

void describe("InformerLiveState cache form", () => {
  void it("keeps an object without managedFields and with its record as a digest, leaving the written object alone", async (t) => {
    const source = new QuietSource();
    const live = liveState(source);
    t.after(() => live.stop());
    await live.get(configMapMapping, "team", "a");
    const object = written("a");
    object.metadata.managedFields = [{ manager: "driftless", operation: "Update" }];
    const record = object.metadata.annotations?.[new Annotator().annotationKey];
    live.remember(configMapMapping, object);
    const cached = await live.get(configMapMapping, "team", "a");
    assert.equal(cached?.metadata.managedFields, undefined);
    assert.ok(cached !== undefined && hasRecordDigest(cached, new Annotator().annotationKey));
    assert.deepEqual(cached?.data, object.data);
    assert.deepEqual(
      object.metadata.managedFields,
      [{ manager: "driftless", operation: "Update" }],
      "the caller's object was changed",
    );
    assert.equal(object.metadata.annotations?.[new Annotator().annotationKey], record);
  });
});

void describe("InformerLiveState.prepare", () => {
  void it("starts the first list of every type it is given at once, without waiting for any", async (t) => {
    // Lists that answer only when released: a type the API server has just started serving answers
    // its first list after about a second.
    const releases: (() => void)[] = [];
    const source = {
      lists: 0,
      async *listPages(): AsyncGenerator<ListPage> {
        this.lists++;
        await new Promise<void>((resolve) => releases.push(resolve));
        yield { items: [], resourceVersion: "10", restart: false };
      },
      async *watch(_m: ResourceMapping, opts: WatchOptions): AsyncGenerator<WatchEvent> {
        await new Promise<void>((resolve) => opts.signal.addEventListener("abort", () => resolve(), { once: true }));
      },
    };
    const live = liveState(source as unknown as QuietSource);
    t.after(() => live.stop());
    const types = ["alphas", "betas", "gammas"].map((resource) => ({
      ...configMapMapping,
      group: "example.com",
      resource,
      kind: resource,
    }));
    live.prepare(types);
    await until("three lists in flight", () => source.lists === 3);
    const read = live.get(types[2]!, "team", "a");
    for (const release of releases) release();
    assert.equal(await read, undefined);
    assert.equal(source.lists, 3, "a prepared type was listed again");
  });
});
