/**
 * Reading a large source: N small ConfigMap files (default 10,000, goal: well under 1-2 s) in 100
 * directories, read, validated, declared and hashed by `readSource`. Also timed: the same objects as
 * one multi-document file, and as files the YAML fast path declines (flow style), which shows what the
 * general parser costs.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readSource } from "../src/index.ts";
import type { KindResolver } from "../src/index.ts";

const count = Number(process.env["BENCH_FILES"] ?? 10_000);
const rounds = Number(process.env["BENCH_ROUNDS"] ?? 5);
const kinds: KindResolver = {
  resolveKind: () => ({ group: "", version: "v1", resource: "configmaps", namespaced: true }),
};

function configMap(i: number, flow: boolean): string {
  if (flow)
    return `{apiVersion: v1, kind: ConfigMap, metadata: {name: cm-${i}, labels: {app: demo}}, data: {key: value-${i}}}\n`;
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${i}\n  labels:\n    app: demo\n  annotations:\n    owner: team-${i % 100}\ndata:\n  key: value-${i}\n  other: "some longer string value here"\n`;
}

async function tree(layout: "files" | "one-file" | "flow-files"): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "driftless-bench-source-"));
  if (layout === "one-file") {
    await writeFile(join(dir, "all.yaml"), Array.from({ length: count }, (_, i) => configMap(i, false)).join("---\n"));
    return dir;
  }
  const perDir = Math.ceil(count / 100);
  for (let d = 0; d * perDir < count; d++) {
    await mkdir(join(dir, `team-${d}`));
    const files = Array.from({ length: Math.min(perDir, count - d * perDir) }, (_, k) => d * perDir + k);
    await Promise.all(
      files.map((i) => writeFile(join(dir, `team-${d}`, `cm-${i}.yaml`), configMap(i, layout === "flow-files"))),
    );
  }
  return dir;
}

const results: { layout: string; objects: number; medianMs: number; minMs: number; maxMs: number; rssMiB: number }[] =
  [];
for (const layout of ["files", "one-file", "flow-files"] as const) {
  const dir = await tree(layout);
  try {
    const times: number[] = [];
    let objects = 0;
    for (let round = 0; round < rounds; round++) {
      const t0 = performance.now();
      const result = await readSource(dir, { scope: { kind: "RootSync" }, kinds });
      times.push(performance.now() - t0);
      if (!result.complete) throw new Error(result.errors[0].message);
      objects = result.objects.length;
    }
    times.sort((a, b) => a - b);
    results.push({
      layout,
      objects,
      medianMs: Math.round(times[Math.floor(times.length / 2)] ?? 0),
      minMs: Math.round(times[0] ?? 0),
      maxMs: Math.round(times[times.length - 1] ?? 0),
      rssMiB: Math.round(process.memoryUsage().rss / 2 ** 20),
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

console.log(`| layout | objects | median | min | max | RSS after |`);
console.log(`| --- | --- | --- | --- | --- | --- |`);
for (const r of results)
  console.log(`| ${r.layout} | ${r.objects} | ${r.medianMs} ms | ${r.minMs} ms | ${r.maxMs} ms | ${r.rssMiB} MiB |`);
const out = process.env["BENCH_OUT"];
if (out !== undefined)
  await writeFile(out, JSON.stringify({ benchmark: "read-source", count, rounds, results }, null, 2));
