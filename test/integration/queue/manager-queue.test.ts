import { test } from "node:test";
import assert from "node:assert/strict";
import { ManagerQueue, type ManagerJob, type SyncRef } from "@driftless/queue";
import { eventually } from "../../support/index.ts";
import { gate, testConnection, testPrefix, testSync, type Gate } from "./helpers.ts";

const key = (sync: SyncRef): string => `${sync.kind}/${sync.namespace}/${sync.name}`;

test("processes different syncs in parallel but never one sync twice at once", async (t) => {
  const queue = new ManagerQueue({ connection: testConnection(t), prefix: testPrefix() });
  t.after(() => queue.close());
  const a = testSync("a");
  const b = testSync("b");
  const gates = new Map<string, Gate[]>();
  const running = new Map<string, number>();
  let maxSameSync = 0;
  const done: string[] = [];
  queue.worker(
    async (job) => {
      const k = key(job.sync);
      running.set(k, (running.get(k) ?? 0) + 1);
      maxSameSync = Math.max(maxSameSync, running.get(k) ?? 0);
      const g = gate();
      gates.set(k, [...(gates.get(k) ?? []), g]);
      await g.promise;
      running.set(k, (running.get(k) ?? 1) - 1);
      done.push(k);
    },
    { concurrency: 4 },
  );

  await queue.enqueue(a, "watch");
  await queue.enqueue(b, "watch");
  await eventually(() => running.get(key(a)) === 1 && running.get(key(b)) === 1, {
    what: "both syncs to be processed at once",
  });

  // More requests for `a` while it is processed: one more pass, after the current one.
  for (let i = 0; i < 50; i++) await queue.enqueue(a, "resync");
  assert.deepEqual(await queue.depth(), { waiting: 0, active: 2, delayed: 0, total: 2 });

  gates.get(key(b))?.[0]?.open();
  gates.get(key(a))?.[0]?.open();
  await eventually(() => gates.get(key(a))?.[1], { what: "the second pass for a" });
  gates.get(key(a))?.[1]?.open();
  await eventually(async () => done.length === 3 && (await queue.depth()).total === 0, { what: "all passes" });

  assert.equal(maxSameSync, 1);
  assert.deepEqual(done.filter((k) => k === key(a)).length, 2);
  assert.deepEqual(done.filter((k) => k === key(b)).length, 1);
});

test("a request for a sync whose job still waits is folded into it, whatever its action: processors are level-triggered", async (t) => {
  const queue = new ManagerQueue({ connection: testConnection(t), prefix: testPrefix() });
  t.after(() => queue.close());
  const sync = testSync();

  const first = await queue.enqueue(sync, "watch", "ensure");
  const second = await queue.enqueue(sync, "watch", "teardown");
  assert.equal(first.deduplicated, false);
  assert.equal(second.deduplicated, true);
  assert.equal(second.jobId, first.jobId);
  assert.deepEqual(await queue.depth(), { waiting: 1, active: 0, delayed: 0, total: 1 });
});

test("a request made while the sync is processed runs next, with the latest action and trigger", async (t) => {
  const queue = new ManagerQueue({ connection: testConnection(t), prefix: testPrefix() });
  t.after(() => queue.close());
  const sync = testSync();
  const jobs: ManagerJob[] = [];
  const firstPass = gate();
  queue.worker(async (job) => {
    jobs.push(job);
    if (jobs.length === 1) await firstPass.promise;
  });

  await queue.enqueue(sync, "startup", "ensure");
  await eventually(() => jobs.length === 1, { what: "the first pass" });
  await queue.enqueue(sync, "watch", "ensure");
  await queue.enqueue(sync, "namespace", "teardown");
  firstPass.open();
  await eventually(async () => jobs.length === 2 && (await queue.depth()).total === 0, { what: "the second pass" });

  assert.equal(jobs.length, 2);
  assert.equal(jobs[0]?.action, "ensure");
  assert.deepEqual(jobs[0]?.sync, sync);
  assert.equal(jobs[0]?.data.trigger, "startup");
  assert.equal(jobs[1]?.action, "teardown");
  assert.equal(jobs[1]?.data.trigger, "namespace");
  assert.equal(queue.name, "manager");
});
