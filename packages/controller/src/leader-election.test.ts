import { test } from "node:test";
import assert from "node:assert/strict";
import { KubeApiError, KubeReason, type KubeClient, type KubeObject } from "@driftless/kube";
import { createLogger } from "@driftless/sync";
import { leaderElectionTimings, LeaderElector, NotLeaderError } from "./leader-election.ts";

const quiet = createLogger({}, { write: () => undefined });

/** One Lease in memory, with the API server's optimistic concurrency; a view whose `hang` is set reads until aborted. */
function fakeLease() {
  let lease: KubeObject | undefined;
  let version = 0;
  const state = { writes: 0 };
  const store = (obj: KubeObject): KubeObject => {
    state.writes++;
    lease = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++version) } };
    return structuredClone(lease);
  };
  const conflict = (reason: string): KubeApiError =>
    new KubeApiError({ status: 409, reason, serverMessage: "conflict", operation: "write Lease" });
  const view = (hang: () => boolean): KubeClient =>
    ({
      get: async (_m: unknown, _ns: unknown, _name: unknown, opts: { signal?: AbortSignal } = {}) => {
        if (hang())
          await new Promise((_resolve, reject) =>
            opts.signal?.addEventListener("abort", () => reject(opts.signal?.reason), { once: true }),
          );
        return lease === undefined ? undefined : structuredClone(lease);
      },
      create: (_m: unknown, obj: KubeObject) =>
        lease === undefined ? Promise.resolve(store(obj)) : Promise.reject(conflict(KubeReason.AlreadyExists)),
      replace: (_m: unknown, obj: KubeObject) =>
        obj.metadata.resourceVersion === lease?.metadata.resourceVersion
          ? Promise.resolve(store(obj))
          : Promise.reject(conflict(KubeReason.Conflict)),
    }) as unknown as KubeClient;
  return { view, state };
}

function elector(client: KubeClient, identity = "a") {
  const events: string[] = [];
  const le = new LeaderElector({
    client,
    namespace: "config-management-system",
    name: "lease",
    identity,
    leaseDurationMs: 3_000,
    renewDeadlineMs: 2_000,
    retryPeriodMs: 100,
    requestTimeoutMs: 500,
    log: quiet,
  });
  const at = { started: 0, stopped: 0 };
  le.start({
    onStartedLeading: () => {
      events.push("started");
      at.started = performance.now();
    },
    onStoppedLeading: () => {
      events.push("stopped");
      at.stopped = performance.now();
    },
  });
  return { le, events, at };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Blocks the thread as SIGSTOP would: no timer, no I/O, no microtask runs meanwhile. */
function freeze(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

test("timings default to client-go's and keep request timeout < renew deadline < lease duration", () => {
  assert.deepEqual(leaderElectionTimings(), {
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
    requestTimeoutMs: 5_000,
  });
  assert.throws(() => leaderElectionTimings({ renewDeadlineMs: 15_000 }), RangeError);
  assert.throws(() => leaderElectionTimings({ requestTimeoutMs: 10_000 }), RangeError);
  assert.throws(() => leaderElectionTimings({ retryPeriodMs: 10_000 }), RangeError);
});

test("a leader frozen past its renew deadline refuses its first write and steps down, before any timer fires", async () => {
  const { view, state } = fakeLease();
  const { le, events } = elector(view(() => false));
  await until(() => le.isLeader, "leadership");
  assert.doesNotThrow(() => le.fence("update ConfigMap ns/a"));
  const writes = state.writes;
  freeze(2_100);
  assert.equal(le.isLeader, false);
  assert.throws(() => le.fence("update ConfigMap ns/a"), NotLeaderError);
  assert.deepEqual(events, ["started", "stopped"], "stepped down at the check, not when its timer fires");
  await le.stop();
  assert.equal(state.writes, writes, "no renewal (and no release) after the deadline");
});

test("a renewal that hangs does not keep a leader past its renew deadline", async () => {
  const { view } = fakeLease();
  let hang = false;
  const { le, events } = elector(view(() => hang));
  await until(() => le.isLeader, "leadership");
  const hungAt = performance.now();
  hang = true;
  await until(() => events.includes("stopped"), "stepping down");
  const after = performance.now() - hungAt;
  assert.ok(after <= 2_000 + 50, `stepped down ${Math.round(after)} ms after the last renewal began`);
  assert.equal(le.isLeader, false);
  assert.throws(() => le.fence("delete ConfigMap ns/a"), NotLeaderError);
  await le.stop();
});

test("a renewal retried late within the renew deadline is sent and keeps the leader", async () => {
  const { view, state } = fakeLease();
  let hangs = 0;
  const le = new LeaderElector({
    client: view(() => hangs-- > 0),
    namespace: "config-management-system",
    name: "lease",
    identity: "a",
    leaseDurationMs: 3_000,
    renewDeadlineMs: 2_000,
    retryPeriodMs: 200,
    requestTimeoutMs: 900,
    log: quiet,
  });
  const events: string[] = [];
  le.start({ onStartedLeading: () => events.push("started"), onStoppedLeading: () => events.push("stopped") });
  await until(() => le.isLeader, "leadership");
  // One renewal hangs to its timeout; the retry then has less than a request timeout left before the deadline.
  hangs = 1;
  const writes = state.writes;
  await until(() => hangs < 0 && state.writes > writes, "the late renewal written");
  assert.deepEqual(events, ["started"]);
  assert.equal(le.isLeader, true);
  await le.stop();
});

test("a standby takes over only after the leader has stepped down and the lease has gone unrenewed", async () => {
  const { view } = fakeLease();
  let partitioned = false;
  const first = elector(view(() => partitioned));
  await until(() => first.le.isLeader, "the first leader");
  const second = elector(
    view(() => false),
    "b",
  );
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(second.le.isLeader, false);
  assert.throws(() => second.le.fence("create ConfigMap ns/a"), NotLeaderError);
  // The leader can no longer reach the API server; the standby still can.
  const cutAt = performance.now();
  partitioned = true;
  await until(() => second.at.started > 0, "the takeover");
  assert.ok(first.at.stopped > 0 && first.at.stopped < second.at.started, "the old leader stepped down first");
  assert.ok(second.at.started - cutAt >= 3_000 - 100 - 10, "the standby waited a lease duration");
  assert.ok(second.at.started - first.at.stopped >= 3_000 - 2_000 - 100, "by the margin lease - renew deadline");
  await first.le.stop();
  await second.le.stop();
});
