/**
 * Control-plane start time after the first build (goal: under 20 s) and the memory it holds.
 * Builds first if needed (not timed). Each round starts a fresh control plane in a temp dir.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultCrdDir, down, ensureBinaries, up } from "../src/index.ts";

const rounds = Number(process.env["BENCH_ROUNDS"] ?? 3);
await ensureBinaries();

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kib / 1024);
}

const results: { round: number; coldStartMs: number; idempotentUpMs: number; rssMiB: Record<string, number> }[] = [];
for (let round = 1; round <= rounds; round++) {
  const stateDir = await mkdtemp(join(tmpdir(), "driftless-bench-cp-"));
  try {
    const t0 = performance.now();
    const state = await up({ stateDir, crdDir: defaultCrdDir(), detached: false, quiet: true });
    const coldStartMs = Math.round(performance.now() - t0);
    const t1 = performance.now();
    await up({ stateDir, detached: false, quiet: true });
    const idempotentUpMs = Math.round(performance.now() - t1);
    const rss: Record<string, number> = {};
    for (const p of state.processes) rss[p.name] = await rssMiB(p.pid);
    results.push({ round, coldStartMs, idempotentUpMs, rssMiB: rss });
  } finally {
    await down(stateDir);
    await rm(stateDir, { recursive: true, force: true });
  }
}

console.log(
  "| round | start to ready (CRDs installed) | idempotent up | etcd RSS | kube-apiserver RSS | kube-controller-manager RSS |",
);
console.log("| --- | --- | --- | --- | --- | --- |");
for (const r of results) {
  console.log(
    `| ${r.round} | ${r.coldStartMs} ms | ${r.idempotentUpMs} ms | ${r.rssMiB["etcd"]} MiB | ${r.rssMiB["kube-apiserver"]} MiB | ${r.rssMiB["kube-controller-manager"]} MiB |`,
  );
}
const out = process.env["BENCH_OUT"];
if (out !== undefined) await writeFile(out, JSON.stringify({ benchmark: "control-plane", results }, null, 2));
