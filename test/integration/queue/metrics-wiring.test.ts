import { test } from "node:test";
import assert from "node:assert/strict";
import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import { createMetrics } from "@driftless/metrics";
import { SyncQueue } from "@driftless/queue";
import { eventually } from "../../support/index.ts";
import { gate, testConnection, testPrefix, testSync } from "./helpers.ts";

test("a sync queue's job outcomes and depth feed driftless's metrics directly", async (t) => {
  const metrics = createMetrics({ processMetrics: false });
  const queue = new SyncQueue({
    sync: testSync(),
    connection: testConnection(t),
    prefix: testPrefix(),
    retry: { attempts: 1 },
    hooks: { onJobDone: metrics.recordJob },
  });
  t.after(() => queue.close());
  const stopWatching = metrics.watchQueueDepth("sync", queue);
  t.after(stopWatching);
  const pass = gate();
  let passes = 0;
  queue.worker(async () => {
    passes++;
    if (passes === 1) await pass.promise;
    if (passes === 2)
      throw new DriftlessError({ code: KnvCode.InvalidSync, errorClass: ErrorClass.Terminal, message: "bad spec" });
  });

  await queue.enqueue("startup");
  await eventually(() => passes === 1, { what: "the first pass" });
  await queue.enqueue("drift");
  assert.match(
    await metrics.registry.getSingleMetricAsString("driftless_queue_jobs"),
    /^driftless_queue_jobs\{queue="sync",state="active"\} 1$/m,
  );

  pass.open();
  await eventually(async () => passes === 2 && (await queue.depth()).total === 0, { what: "both passes" });
  const text = await metrics.registry.metrics();
  assert.match(text, /^driftless_job_duration_seconds_count\{queue="sync",result="success"\} 1$/m);
  assert.match(text, /^driftless_job_duration_seconds_count\{queue="sync",result="terminal"\} 1$/m);
  assert.match(text, /^driftless_job_failures_total\{queue="sync",result="terminal"\} 1$/m);
  assert.match(text, /^driftless_queue_jobs\{queue="sync",state="active"\} 0$/m);
});
