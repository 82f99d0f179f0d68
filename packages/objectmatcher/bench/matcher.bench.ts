/**
 * Matcher throughput: `node packages/objectmatcher/bench/matcher.bench.ts`.
 *
 * For typical objects as the API server returns them (defaulted, with our last-applied record), it
 * measures matches per second, and a plain structural diff of the same pair (fast-json-patch's
 * `compare`, the "diff current against declared" approach the matcher replaces) in the same run, to
 * report the matcher's cost relative to it. "warm" is the reconciler's steady state (the record's
 * annotation is unchanged since the last pass, so its decoding is cached); "cold" decodes it every time.
 *
 * Prints a markdown table; writes JSON to $BENCH_OUT when set. BENCH_MS sets the time per measurement.
 */
import { writeFileSync } from "node:fs";
import os from "node:os";
import jsonpatch from "fast-json-patch";
import { Annotator, PatchMaker, applyPatch } from "../src/index.ts";
import type { JsonObject } from "../src/index.ts";
import { declaredConfigMap, liveConfigMap } from "../src/testdata/configmap.ts";
import { declaredCertificate, liveCertificate } from "../src/testdata/custom-resource.ts";
import { declaredDeployment, liveDeployment } from "../src/testdata/deployment.ts";
import { declaredService, liveService } from "../src/testdata/service.ts";

const MEASURE_MS = Number(process.env["BENCH_MS"] ?? 1000);

interface Case {
  readonly name: string;
  readonly current: JsonObject;
  readonly modified: JsonObject;
  readonly expectEmpty: boolean;
}

interface Row {
  readonly object: string;
  readonly matchesPerSecond: number;
  readonly coldMatchesPerSecond: number;
  readonly plainDiffsPerSecond: number;
  /** Time of one match divided by time of one plain diff of the same pair (goal ≤ 3). */
  readonly costVsPlainDiff: number;
  readonly needsUpdate: boolean;
}

function recorded(live: JsonObject, declared: JsonObject): JsonObject {
  const record = structuredClone(declared);
  new Annotator().setLastAppliedAnnotation(record);
  const metadata = live["metadata"] as JsonObject;
  const annotations = (metadata["annotations"] ?? {}) as JsonObject;
  const ours = ((record["metadata"] as JsonObject)["annotations"] as JsonObject)[new Annotator().annotationKey];
  metadata["annotations"] = { ...annotations, [new Annotator().annotationKey]: ours ?? null };
  return live;
}

function drifted(): Case {
  const current = recorded(liveDeployment(), declaredDeployment());
  const spec = current["spec"] as JsonObject;
  spec["replicas"] = 1;
  return { name: "Deployment (drifted, + patch)", current, modified: declaredDeployment(), expectEmpty: false };
}

const cases: Case[] = [
  {
    name: "Deployment (defaulted)",
    current: recorded(liveDeployment(), declaredDeployment()),
    modified: declaredDeployment(),
    expectEmpty: true,
  },
  {
    name: "Service",
    current: recorded(liveService(), declaredService()),
    modified: declaredService(),
    expectEmpty: true,
  },
  {
    name: "ConfigMap",
    current: recorded(liveConfigMap(), declaredConfigMap()),
    modified: declaredConfigMap(),
    expectEmpty: true,
  },
  {
    name: "Custom resource (Certificate)",
    current: recorded(liveCertificate(), declaredCertificate()),
    modified: declaredCertificate(),
    expectEmpty: true,
  },
  drifted(),
];

/** Operations per second of `fn`, after a warm-up, over at least MEASURE_MS. */
function measure(fn: () => unknown): number {
  let sink = 0;
  for (let i = 0; i < 500; i++) if (fn()) sink++;
  let iterations = 0;
  let batch = 256;
  const start = process.hrtime.bigint();
  let elapsedMs = 0;
  while (elapsedMs < MEASURE_MS) {
    for (let i = 0; i < batch; i++) if (fn()) sink++;
    iterations += batch;
    elapsedMs = Number(process.hrtime.bigint() - start) / 1e6;
    if (elapsedMs < MEASURE_MS / 10) batch *= 2;
  }
  if (sink < 0) console.log(sink);
  return (iterations / elapsedMs) * 1000;
}

const maker = new PatchMaker();
const rows: Row[] = cases.map((c) => {
  const check = maker.calculate(c.current, c.modified);
  if (check.isEmpty() !== c.expectEmpty)
    throw new Error(`${c.name}: expected isEmpty() = ${c.expectEmpty}\n${check.render()}`);
  const withPatch = !c.expectEmpty;
  const warm = measure(() => {
    const result = maker.calculate(c.current, c.modified);
    return withPatch ? Object.keys(result.patch).length > 0 : result.isEmpty();
  });
  const cold = measure(() => {
    const result = new PatchMaker(new Annotator()).calculate(c.current, c.modified);
    return withPatch ? Object.keys(result.patch).length > 0 : result.isEmpty();
  });
  const plain = measure(() => jsonpatch.compare(c.current, c.modified).length === 0);
  if (withPatch) applyPatch(c.current, check);
  return {
    object: c.name,
    matchesPerSecond: Math.round(warm),
    coldMatchesPerSecond: Math.round(cold),
    plainDiffsPerSecond: Math.round(plain),
    costVsPlainDiff: Number((plain / warm).toFixed(2)),
    needsUpdate: !check.isEmpty(),
  };
});

const environment = {
  node: process.version,
  cpus: os.cpus().length,
  cpuModel: os.cpus()[0]?.model ?? "unknown",
  measureMs: MEASURE_MS,
  date: new Date().toISOString(),
};

const lines = [
  `objectmatcher benchmark — Node ${environment.node}, ${environment.cpus} CPUs (${environment.cpuModel})`,
  "",
  "| object | matches/s (warm) | matches/s (cold record) | plain diffs/s | matcher cost vs plain diff |",
  "| --- | ---: | ---: | ---: | ---: |",
  ...rows.map(
    (r) =>
      `| ${r.object} | ${r.matchesPerSecond.toLocaleString("en-US")} | ${r.coldMatchesPerSecond.toLocaleString("en-US")} | ` +
      `${r.plainDiffsPerSecond.toLocaleString("en-US")} | ${r.costVsPlainDiff}× |`,
  ),
];
console.log(lines.join("\n"));

const out = process.env["BENCH_OUT"];
if (out) writeFileSync(out, `${JSON.stringify({ benchmark: "objectmatcher", environment, results: rows }, null, 2)}\n`);
