import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { MANAGER_QUEUE, parseSyncQueueName, syncKey, syncQueueName, type SyncRef } from "./names.ts";

test("names a sync's queue from its kind, namespace and name", () => {
  assert.equal(
    syncQueueName({ kind: "RootSync", namespace: "config-management-system", name: "root-sync" }),
    "sync.rootsync.config-management-system.root-sync",
  );
  assert.equal(
    syncQueueName({ kind: "RepoSync", namespace: "team-a", name: "repo-sync" }),
    "sync.reposync.team-a.repo-sync",
  );
});

test("queue names never contain a colon, which BullMQ refuses", () => {
  assert.equal(syncQueueName({ kind: "RepoSync", namespace: "a:b", name: "c:d" }).includes(":"), false);
});

test("a RootSync and a RepoSync with the same namespace and name get different queues", () => {
  const ref = { namespace: "config-management-system", name: "root-sync" };
  assert.notEqual(syncQueueName({ kind: "RootSync", ...ref }), syncQueueName({ kind: "RepoSync", ...ref }));
});

test("dots in a sync's name cannot make two syncs share a queue", () => {
  // Without escaping, ("a.b", "c") and ("a", "b.c") would both read "a.b.c".
  const one = syncQueueName({ kind: "RepoSync", namespace: "a.b", name: "c" });
  const two = syncQueueName({ kind: "RepoSync", namespace: "a", name: "b.c" });
  assert.notEqual(one, two);
});

test("refuses a sync without a namespace or a name", () => {
  assert.throws(() => syncQueueName({ kind: "RootSync", namespace: "", name: "x" }), TypeError);
  assert.throws(() => syncQueueName({ kind: "RootSync", namespace: "x", name: "" }), TypeError);
});

const syncs = fc.record({
  kind: fc.constantFrom("RootSync" as const, "RepoSync" as const),
  namespace: fc.string({ minLength: 1, maxLength: 20, unit: "grapheme" }),
  name: fc.string({ minLength: 1, maxLength: 30, unit: "grapheme" }),
});

test("every sync's queue name is safe, parses back to the same sync, and so is unique per sync", () => {
  fc.assert(
    fc.property(syncs, (sync: SyncRef) => {
      const name = syncQueueName(sync);
      assert.match(name, /^[a-z0-9._-]+$/);
      assert.deepEqual(parseSyncQueueName(name), { kind: sync.kind, namespace: sync.namespace, name: sync.name });
    }),
    { numRuns: 2_000 },
  );
});

test("two different syncs never share a queue name", () => {
  fc.assert(
    fc.property(syncs, syncs, (a: SyncRef, b: SyncRef) => {
      const same = a.kind === b.kind && a.namespace === b.namespace && a.name === b.name;
      assert.equal(syncQueueName(a) === syncQueueName(b), same);
    }),
    { numRuns: 2_000 },
  );
});

test("parses only canonical sync queue names", () => {
  assert.equal(parseSyncQueueName(MANAGER_QUEUE), undefined);
  assert.equal(parseSyncQueueName("sync.rootsync.ns"), undefined);
  assert.equal(parseSyncQueueName("sync.othersync.ns.name"), undefined);
  assert.equal(parseSyncQueueName("sync.reposync.ns.Name"), undefined, "upper case is escaped in canonical names");
  assert.equal(parseSyncQueueName("sync.reposync.ns._zz"), undefined);
});

test("a sync's key in the manager queue is unique per sync too", () => {
  const sync: SyncRef = { kind: "RepoSync", namespace: "team-a", name: "repo-sync" };
  assert.equal(syncKey(sync), syncQueueName(sync));
});
