/**
 * Many new CRD groups at once, on a real local control plane, Redis and git (docs/benchmarks.md,
 * "Many CRD groups"): one RootSync commits 1 Namespace + BENCH_CRDS CRDs (each its own group, with a
 * keyed list) × BENCH_CRS_PER_CRD custom resources (default 100 × 50), then a commit removes them all.
 * - commit → Synced, and the reconciler's CPU over it
 * - removal commit → Synced, its CPU, and the reconciler's `list or watch failed` warnings in the
 *   15 s after (a deleted kind still watched retries a 404 each backoff step)
 * - how long /openapi/v3 takes to publish a new CRD's schema after it is Established
 * BENCH_SAMPLES samples (default 3), each with a fresh reconciler and fresh groups; medians printed.
 * Self-contained: `npm run bench crd-groups` runs it alone.
 */
import { execFileSync } from "node:child_process";
import { appendFileSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { namespaceMapping } from "@driftless/kube";
import { freeLoopbackPort } from "@driftless/local-cluster";
import { widgetCrd } from "../support/crds.ts";
import {
  crdMapping,
  reconcilerEntry,
  rootSyncMapping,
  spawnBenchReconciler,
  startBenchCluster,
} from "./bench-cluster.ts";

const crds = Number(process.env["BENCH_CRDS"] ?? 100);
const perCrd = Number(process.env["BENCH_CRS_PER_CRD"] ?? 50);
const samples = Number(process.env["BENCH_SAMPLES"] ?? 3);
const warningWindowMs = 15_000;

const { root, cluster, redis, client, close } = await startBenchCluster("crd-groups");
const reconcilerMain = reconcilerEntry();
const git = (cwd: string, ...args: string[]): string =>
  execFileSync("git", ["-C", cwd, "-c", "user.name=bench", "-c", "user.email=bench@driftless.invalid", ...args], {
    encoding: "utf8",
  }).trim();

/** Block YAML, as teams write it (JSON in a .yaml file takes the general YAML parser's slow path). */
const widgetYaml = (group: string, namespace: string, i: number): string =>
  [
    "---",
    `apiVersion: ${group}/v1`,
    "kind: Widget",
    "metadata:",
    `  name: w-${i}`,
    `  namespace: ${namespace}`,
    "spec:",
    `  size: ${i}`,
    "  ports:",
    "  - name: http",
    `    port: ${8080 + i}`,
    "",
  ].join("\n");

/** CPU seconds a process has used so far (user + system), from /proc/PID/stat. */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("bench: timed out");
    await delay(50);
  }
}

/** Established → listed in /openapi/v3, for one new CRD (ms). */
async function openApiLagMs(sample: number): Promise<number> {
  const group = `lag${sample}.crd-groups.example.com`;
  await client.create(crdMapping, widgetCrd(group) as never);
  await waitFor(async () => {
    const got = await client.get(crdMapping, undefined, `widgets.${group}`);
    const conditions = (got?.["status"] as { conditions?: { type: string; status: string }[] } | undefined)?.conditions;
    return conditions?.some((c) => c.type === "Established" && c.status === "True") === true ? true : undefined;
  }, 60_000);
  const established = performance.now();
  await waitFor(async () => {
    const index = await client.request<{ paths?: Record<string, unknown> }>({ method: "GET", path: "/openapi/v3" });
    return index.paths?.[`apis/${group}/v1`] === undefined ? undefined : true;
  }, 60_000);
  const lag = performance.now() - established;
  await client.delete(crdMapping, undefined, `widgets.${group}`);
  return Math.round(lag);
}

interface Row {
  syncS: number;
  syncCpuS: number;
  removeS: number;
  removeCpuS: number;
  notFoundWarnings: number;
  openApiLagMs: number;
}

async function sample(n: number): Promise<Row> {
  await client
    .create(namespaceMapping, { apiVersion: "v1", kind: "Namespace", metadata: { name: "config-management-system" } })
    .catch(() => undefined); // there already
  const name = `crd-groups-${n}`;
  const namespace = `crd-groups-${n}`;
  const repoDir = join(root, `repo-${n}`);
  const remote = join(root, `remote-${n}.git`);
  execFileSync("git", ["init", "-q", "--bare", "-b", "main", remote]);
  execFileSync("git", ["init", "-q", "-b", "main", repoDir]);
  git(repoDir, "remote", "add", "origin", remote);
  // The Namespace first, so the first commit syncs (and the source is never empty).
  await mkdir(join(repoDir, "config"), { recursive: true });
  await writeFile(
    join(repoDir, "config", "namespace.yaml"),
    JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }),
  );
  git(repoDir, "add", "-A");
  git(repoDir, "commit", "-q", "-m", "a namespace");
  git(repoDir, "push", "-q", "origin", "main");
  await client.create(rootSyncMapping, {
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RootSync",
    metadata: {
      name,
      namespace: "config-management-system",
      annotations: { "configsync.gke.io/allow-empty-source": "true" },
    },
    spec: {
      sourceFormat: "unstructured",
      git: { repo: `file://${remote}`, branch: "main", dir: "config", auth: "none", period: "1s" },
    },
  });
  const logs: string[] = [];
  const child = spawnBenchReconciler(
    { cluster, redis, root },
    {
      entry: reconcilerMain,
      sync: { kind: "RootSync", namespace: "config-management-system", name },
      metricsPort: await freeLoopbackPort(),
      key: name,
    },
  );
  child.stdout?.on("data", (chunk: Buffer) => logs.push(chunk.toString()));
  // BENCH_CHILD_LOG=FILE keeps the reconciler's output.
  const childLog = process.env["BENCH_CHILD_LOG"];
  if (childLog !== undefined) child.stdout?.on("data", (chunk: Buffer) => appendFileSync(childLog, chunk));
  const pid = child.pid ?? 0;
  const synced = (commit: string): Promise<true> =>
    waitFor(async () => {
      const sync = await client.get(rootSyncMapping, "config-management-system", name);
      const status = (sync?.["status"] ?? {}) as {
        lastSyncedCommit?: string;
        conditions?: { type: string; status: string }[];
      };
      const syncing = status.conditions?.find((c) => c.type === "Syncing");
      return status.lastSyncedCommit === commit && syncing?.status === "False" ? true : undefined;
    }, 900_000);
  try {
    await synced(git(repoDir, "rev-parse", "HEAD"));
    for (let g = 0; g < crds; g++) {
      const group = `s${n}g${g}.crd-groups.example.com`;
      const widgets = Array.from({ length: perCrd }, (_, i) => widgetYaml(group, namespace, i));
      await writeFile(
        join(repoDir, "config", `group-${g}.yaml`),
        [`---\n${JSON.stringify(widgetCrd(group))}\n`, ...widgets].join(""),
      );
    }
    git(repoDir, "add", "-A");
    git(repoDir, "commit", "-q", "-m", `${crds} CRDs x ${perCrd} custom resources`);
    const added = git(repoDir, "rev-parse", "HEAD");
    const cpu0 = await cpuSeconds(pid);
    const t0 = performance.now();
    git(repoDir, "push", "-q", "origin", "main");
    await synced(added);
    const syncS = (performance.now() - t0) / 1000;
    const syncCpuS = (await cpuSeconds(pid)) - cpu0;

    for (let g = 0; g < crds; g++) await rm(join(repoDir, "config", `group-${g}.yaml`));
    git(repoDir, "add", "-A");
    git(repoDir, "commit", "-q", "-m", "the CRDs and their resources go");
    const removed = git(repoDir, "rev-parse", "HEAD");
    const cpu1 = await cpuSeconds(pid);
    const t1 = performance.now();
    git(repoDir, "push", "-q", "origin", "main");
    await synced(removed);
    const removeS = (performance.now() - t1) / 1000;
    const removeCpuS = (await cpuSeconds(pid)) - cpu1;
    const linesBefore = logs.join("").split("\n").length;
    // A fixed window on purpose: what is measured is how many warnings a deleted kind's watch logs in it.
    await delay(warningWindowMs);
    const notFoundWarnings = logs
      .join("")
      .split("\n")
      .slice(linesBefore - 1)
      .filter((line) => line.includes("list or watch failed") && line.includes("404")).length;
    return { syncS, syncCpuS, removeS, removeCpuS, notFoundWarnings, openApiLagMs: await openApiLagMs(n) };
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
    await client.delete(namespaceMapping, undefined, namespace).catch(() => undefined);
  }
}

const rows: Row[] = [];
try {
  for (let n = 0; n < samples; n++) rows.push(await sample(n));
} finally {
  await close();
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? Number.NaN)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};
console.log(
  `| sample | commit of ${crds} CRDs × ${perCrd} → Synced | reconciler CPU | removal → Synced | reconciler CPU | 404 warnings in ${warningWindowMs / 1000} s after | /openapi/v3 after Established |`,
);
console.log("| --- | --- | --- | --- | --- | --- | --- |");
const cells = (r: Row): string =>
  `${r.syncS.toFixed(1)} s | ${r.syncCpuS.toFixed(1)} s | ${r.removeS.toFixed(1)} s | ${r.removeCpuS.toFixed(1)} s | ${r.notFoundWarnings} | ${r.openApiLagMs} ms |`;
rows.forEach((r, i) => console.log(`| ${i + 1} | ${cells(r)}`));
const summary: Row = {
  syncS: median(rows.map((r) => r.syncS)),
  syncCpuS: median(rows.map((r) => r.syncCpuS)),
  removeS: median(rows.map((r) => r.removeS)),
  removeCpuS: median(rows.map((r) => r.removeCpuS)),
  notFoundWarnings: median(rows.map((r) => r.notFoundWarnings)),
  openApiLagMs: median(rows.map((r) => r.openApiLagMs)),
};
console.log(`| median | ${cells(summary)}`);
const out = process.env["BENCH_OUT"];
if (out !== undefined)
  await writeFile(out, JSON.stringify({ benchmark: "crd-groups", crds, perCrd, rows, summary }, null, 2));
