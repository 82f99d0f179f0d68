/**
 * `npm run bench soak`: one reconciler (the bundle) kept busy for SOAK_MINUTES (20): every poll (1 s) a
 * full pass over SOAK_OBJECTS (50) ConfigMaps, a commit changing one of them every 3 s, and one of them
 * changed behind its back every second (a drift to correct). Prints, per minute, the passes and the range
 * of the heap in use and of RSS at the end of each pass (from its own log line): a leak shows as a floor
 * that keeps rising.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { freeLoopbackPort } from "@driftless/local-cluster";
import { configMapMapping, namespaceMapping } from "@driftless/kube";
import { BenchRepo, loadAverage, waitFor } from "./bench-process.ts";
import { reconcilerEntry, rootSyncMapping, spawnBenchReconciler, startBenchCluster } from "./bench-cluster.ts";

const minutes = Number(process.env["SOAK_MINUTES"] ?? 20);
const objects = Number(process.env["SOAK_OBJECTS"] ?? 50);
const rootNamespace = "config-management-system";
const namespace = "soak";

const bench = await startBenchCluster("soak");
const { root, client, close } = bench;
await client.create(namespaceMapping, { apiVersion: "v1", kind: "Namespace", metadata: { name: rootNamespace } });
const repo = new BenchRepo(root, "soak");
await mkdir(join(repo.work, "config"), { recursive: true });

/** The commit of `round`: every ConfigMap at 0 but one, which carries the round. */
async function commitRound(round: number): Promise<void> {
  const config = join(repo.work, "config");
  await writeFile(
    join(config, "ns.yaml"),
    JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }),
  );
  for (let i = 0; i < objects; i++) {
    const data = { v: String(i === round % objects ? round : 0) };
    const configMap = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `cm-${i}`, namespace }, data };
    await writeFile(join(config, `cm-${i}.yaml`), JSON.stringify(configMap));
  }
  repo.commitAndPush(`round ${round}`);
}

await commitRound(0);
await client.create(rootSyncMapping, {
  apiVersion: "configsync.gke.io/v1beta1",
  kind: "RootSync",
  metadata: { name: "soak", namespace: rootNamespace },
  spec: {
    sourceFormat: "unstructured",
    git: { repo: repo.url, branch: "main", dir: "config", auth: "none", period: "1s" },
  },
});
const child = spawnBenchReconciler(bench, {
  entry: reconcilerEntry(),
  sync: { kind: "RootSync", namespace: rootNamespace, name: "soak" },
  metricsPort: await freeLoopbackPort(),
  key: "soak",
  // Every poll a full pass: the soak exercises the whole pass, not the unchanged-commit shortcut.
  everyPollFullPass: true,
});

interface Sample {
  readonly seconds: number;
  readonly heapUsedMiB: number;
  readonly rssMiB: number;
}
const samples: Sample[] = [];
const started = performance.now();
let partial = "";
child.stdout?.on("data", (chunk: Buffer) => {
  const lines = (partial + chunk.toString()).split("\n");
  partial = lines.pop() ?? "";
  for (const line of lines) {
    if (!line.includes('"pass finished"')) continue;
    const memory = (JSON.parse(line) as { memoryMiB?: { rss: number; heapUsed: number } }).memoryMiB;
    if (memory !== undefined)
      samples.push({ seconds: (performance.now() - started) / 1000, heapUsedMiB: memory.heapUsed, rssMiB: memory.rss });
  }
});
await waitFor("the first pass", () => Promise.resolve(samples.length > 0), 120_000);

let round = 1;
let drifts = 0;
let lastCommit = performance.now();
while (performance.now() - started < minutes * 60_000) {
  if (performance.now() - lastCommit >= 3_000) {
    await commitRound(round++);
    lastCommit = performance.now();
  }
  await client.patch(configMapMapping, namespace, `cm-${round % objects}`, { data: { v: "drift" } }, "merge");
  drifts++;
  await delay(1_000);
}
child.kill("SIGTERM");
await new Promise((resolve) => child.once("exit", resolve));

const range = (values: readonly number[]): string => `${Math.min(...values)}–${Math.max(...values)}`;
process.stdout.write(`| minute | passes | heap in use (MiB) | RSS (MiB) |\n| ---: | ---: | ---: | ---: |\n`);
for (let minute = 0; minute < minutes; minute++) {
  const inMinute = samples.filter((s) => s.seconds >= minute * 60 && s.seconds < (minute + 1) * 60);
  if (inMinute.length === 0) continue;
  const heap = range(inMinute.map((s) => s.heapUsedMiB));
  process.stdout.write(`| ${minute} | ${inMinute.length} | ${heap} | ${range(inMinute.map((s) => s.rssMiB))} |\n`);
}
process.stdout.write(
  `${samples.length} passes, ${round - 1} commits, ${drifts} drifts in ${minutes} min; load ${await loadAverage()}\n`,
);
await close();
