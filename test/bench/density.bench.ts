/**
 * `npm run bench density`: many syncs on one cluster (see docs/benchmarks.md).
 *
 * 1. Process mode: DENSITY_SYNCS (100) RepoSyncs, each in a namespace of its own with DENSITY_OBJECTS (3)
 *    ConfigMaps from one shared repository, under one manager. Time from creation until all are
 *    synced, and again after a manager restart (with the spread of the reconciler starts); per
 *    reconciler PSS, the manager's RSS and PSS, Redis memory per sync (used_memory growth), and the API
 *    server's watches and requests per idle sync per minute (DENSITY_IDLE_S, 60 s window).
 * 2. Deployment mode, the manager alone: DENSITY_MANAGER_SYNCS (1000) RepoSyncs (pods stay pending: no
 *    kubelet). The manager's RSS, the time until each sync has its Deployment, and the requests it made by
 *    verb and resource, in all and per sync (its own driftless_kube_requests_total; the API server's
 *    counts, printed too, include the bench's creates and the control plane's controllers).
 *
 * DENSITY_ONLY=process or deployment runs one part. MANAGER_ENTRY=src runs the TypeScript sources.
 * Process mode also prints what Redis holds per sync, part by part (redis-breakdown.ts: connections by
 * role, keys by kind, the ACL user), read with every reconciler and the manager up.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { openSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { parseAllDocuments } from "yaml";
import { reconcilerName } from "@driftless/api";
import { managerEnvironment, managerNodeFlags } from "@driftless/controller";
import { findRepoRoot, freeLoopbackPort } from "@driftless/local-cluster";
import { namespaceMapping, RestMapper, type KubeObject, type ResourceMapping } from "@driftless/kube";
import { closeRedisConnection, createRedisConnection } from "@driftless/queue";
import { grantRepoSyncReconciler } from "../support/rbac.ts";
import { breakdownLines, infoMemory, redisBreakdown, redisRemainder, remainderLines } from "./redis-breakdown.ts";
import {
  apiserverMetrics,
  BenchRepo,
  difference,
  loadAverage,
  pidsWith,
  pssMiB,
  statusMiB,
  sumOf,
  verbCell,
  waitFor,
} from "./bench-process.ts";
import { repoSyncMapping, startBenchCluster } from "./bench-cluster.ts";

const syncs = Number(process.env["DENSITY_SYNCS"] ?? 100);
const objects = Number(process.env["DENSITY_OBJECTS"] ?? 3);
const idleSeconds = Number(process.env["DENSITY_IDLE_S"] ?? 60);
const managerSyncs = Number(process.env["DENSITY_MANAGER_SYNCS"] ?? 1000);
const only = process.env["DENSITY_ONLY"];
const repoRoot = findRepoRoot();

const { root, cluster, redis, client, close } = await startBenchCluster("density");
const redisAdmin = createRedisConnection(`redis://:${redis.password}@127.0.0.1:${redis.port}`, {
  role: "worker",
  log: () => undefined,
});
const mapper = new RestMapper(client);
const deployments: ResourceMapping = {
  group: "apps",
  version: "v1",
  kind: "Deployment",
  resource: "deployments",
  namespaced: true,
  verbs: [],
};
for (const file of ["namespace.yaml", "manager-rbac.yaml", "reconciler-rbac.yaml"]) {
  for (const doc of parseAllDocuments(await readFile(join(repoRoot, "manifests", file), "utf8"))) {
    const obj = doc.toJS() as KubeObject;
    const m = await mapper.mappingFor(obj.apiVersion, obj.kind);
    if (m === undefined) throw new Error(`${obj.kind} not served`);
    await client.patch(m, m.namespaced ? obj.metadata.namespace : undefined, obj.metadata.name, obj, "apply", {
      fieldManager: "bench",
      force: true,
    });
  }
}
const fromSources = process.env["MANAGER_ENTRY"] === "src";
if (!fromSources) execFileSync(process.execPath, [join(repoRoot, "scripts", "bundle.ts")], { stdio: "inherit" });
const managerEntry = fromSources
  ? join(repoRoot, "apps", "manager", "src", "main.ts")
  : join(repoRoot, "dist", "driftless-manager.mjs");
const reconcilerCommand = fromSources ? "reconciler/src/main.ts" : "dist/driftless-reconciler.mjs";

interface Manager {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly logFile: string;
  readonly metricsPort: number;
}

async function startManager(mode: "process" | "deployment", prefix: string, selector: string): Promise<Manager> {
  const metricsPort = await freeLoopbackPort();
  const logFile = join(root, `manager-${prefix}-${Date.now()}.log`);
  const child = spawn(
    process.execPath,
    [
      // As manifests/manager.yaml runs it.
      ...managerNodeFlags(),
      managerEntry,
      ...["--kubeconfig", cluster.kubeconfig, "--reconciler-mode", mode, "--metrics-port", String(metricsPort)],
      ...["--queue-prefix", prefix, "--state-dir", join(root, `state-${prefix}`), "--sync-selector", selector],
      ...["--lease-name", `driftless-${prefix}`, "--allow-file-repos", "--log-level", "info"],
      ...["--reconciler-image", "driftless:bench"],
    ],
    {
      stdio: ["ignore", openSync(logFile, "w"), openSync(logFile, "a")],
      env: {
        ...process.env,
        ...managerEnvironment,
        REDIS_URL: `redis://127.0.0.1:${redis.port}`,
        REDIS_PASSWORD: redis.password,
      },
    },
  );
  await waitFor("manager ready", async () => (await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).ok, 60_000, 200);
  return { child, pid: child.pid ?? 0, logFile, metricsPort };
}

async function stopManager(manager: Manager): Promise<void> {
  manager.child.kill("SIGTERM");
  await new Promise((resolve) => manager.child.once("exit", resolve));
}

async function createRepoSync(namespace: string, labels: Record<string, string>, repoUrl: string): Promise<void> {
  await client.create(namespaceMapping, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
  await grantRepoSyncReconciler(namespace, { client });
  await client.create(repoSyncMapping, {
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RepoSync",
    metadata: { name: "repo-sync", namespace, labels },
    spec: { sourceFormat: "unstructured", git: { repo: repoUrl, branch: "main", auth: "none", period: "15s" } },
  });
}

async function usedMemory(): Promise<number> {
  return Number(/^used_memory:(\d+)/m.exec(await redisAdmin.info("memory"))?.[1] ?? 0);
}

/** Times (ms since epoch) of the manager's "reconciler process started" lines after `since`. */
async function startTimes(logFile: string, since: number): Promise<number[]> {
  return (await readFile(logFile, "utf8"))
    .split("\n")
    .filter((l) => l.includes('"reconciler process started"'))
    .map((l) => Date.parse((JSON.parse(l) as { time: string }).time))
    .filter((t) => t >= since);
}

/** The manager's own API requests so far (driftless_kube_requests_total), keyed "verb resource": all, and failed. */
async function managerRequests(manager: Manager): Promise<{ all: Map<string, number>; failed: Map<string, number> }> {
  const text = await (await fetch(`http://127.0.0.1:${manager.metricsPort}/metrics`)).text();
  const [all, failed] = [new Map<string, number>(), new Map<string, number>()];
  for (const line of text.split("\n")) {
    if (!line.startsWith("driftless_kube_requests_total{")) continue;
    const key = `${/verb="([^"]*)"/.exec(line)?.[1] ?? "?"} ${/resource="([^"]*)"/.exec(line)?.[1] ?? "?"}`;
    const n = Number(line.split(" ").at(-1));
    all.set(key, (all.get(key) ?? 0) + n);
    if (line.includes('status="error"')) failed.set(key, n);
  }
  return { all, failed };
}

const kubeWriteVerbs: ReadonlySet<string> = new Set(["create", "update", "patch", "delete", "deletecollection"]);

/** The "verb resource" counts whose verb writes (or only those that read), largest first. */
function requestsWhere(counts: Map<string, number>, writes: boolean): Map<string, number> {
  const isWrite = (key: string): boolean => kubeWriteVerbs.has(key.split(" ", 1)[0] ?? "");
  return new Map([...counts].filter(([key]) => isWrite(key) === writes).sort((a, b) => b[1] - a[1]));
}

/** `create secrets 1000 (1.00; 12 failed)`: each count with its share per sync and the requests that failed. */
const perSyncCell = (counts: Map<string, number>, failed: Map<string, number>, per: number): string =>
  [...counts]
    .map(([key, n]) => {
      const errors = failed.get(key) ?? 0;
      return `${key} ${n} (${(n / per).toFixed(2)}${errors > 0 ? `; ${errors} failed` : ""})`;
    })
    .join(", ") || "none";

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const round = (x: number, digits = 1): string => x.toFixed(digits);
const report: Record<string, unknown> = { date: new Date().toISOString(), syncs, objects, managerSyncs };
const lines: string[] = [];

async function processMode(): Promise<void> {
  const repo = new BenchRepo(root, "tenants");
  for (let i = 0; i < objects; i++)
    await writeFile(
      join(repo.work, `cm-${i}.yaml`),
      JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: `cm-${i}` }, data: { value: `${i}` } }),
    );
  const head = repo.commitAndPush("a few config maps");
  const selector = "bench.driftless.dev/density=process";
  const [redisBefore, apiBefore] = [await usedMemory(), await apiserverMetrics(client)];
  const redisInfoBefore = await infoMemory(redisAdmin);
  let manager = await startManager("process", "dp", selector);
  // What the manager alone holds (its connections, BullMQ's scripts): not a sync's.
  const redisManagerOnly = await infoMemory(redisAdmin);
  const idleManagerMiB = await statusMiB(manager.pid, "VmRSS");
  const load = await loadAverage();
  const t0 = performance.now();
  for (let i = 0; i < syncs; i++)
    await createRepoSync(`density-${i}`, { "bench.driftless.dev/density": "process" }, repo.url);
  const allSynced = async (): Promise<boolean> => {
    for (let i = 0; i < syncs; i++) {
      const sync = await client.get(repoSyncMapping, `density-${i}`, "repo-sync");
      if ((sync?.["status"] as { lastSyncedCommit?: string } | undefined)?.lastSyncedCommit !== head) return false;
    }
    return true;
  };
  await waitFor(`${syncs} syncs synced`, allSynced, 1_800_000, 1_000);
  const createdToSyncedS = (performance.now() - t0) / 1000;
  // Start-up garbage settles before memory is read.
  await delay(20_000);
  // This run's reconcilers only (their cache dir is under its root): others may run on the machine.
  const pids = await pidsWith(reconcilerCommand, "--sync-kind\0RepoSync", root);
  const pss = await Promise.all(pids.map(pssMiB));
  const rss = await Promise.all(pids.map((p) => statusMiB(p, "VmRSS")));
  const managerRssMiB = await statusMiB(manager.pid, "VmRSS");
  const managerPssMiB = await pssMiB(manager.pid);
  const redisPerSyncKiB = ((await usedMemory()) - redisBefore) / syncs / 1024;
  const redisParts = await redisBreakdown(redisAdmin, "dp");
  // Idle: every sync synced, nothing changes; what the API server sees in the window.
  const idleStart = await apiserverMetrics(client, true);
  await delay(idleSeconds * 1000);
  const idleEnd = await apiserverMetrics(client, true);
  const idleRequests = difference(idleEnd.requests, idleStart.requests);
  const requestsPerSyncPerMin = sumOf(idleRequests) / syncs / (idleSeconds / 60);
  const watchesPerSync = (idleEnd.watches - apiBefore.watches) / syncs;

  // Restart: every reconciler stops with the manager; the next manager starts them again.
  await stopManager(manager);
  const restartAt = Date.now();
  const t1 = performance.now();
  manager = await startManager("process", "dp", selector);
  const up = async (): Promise<boolean> => {
    const current = await pidsWith(reconcilerCommand, "--sync-kind\0RepoSync", root);
    if (current.length < syncs) return false;
    // Each reconciler has finished a pass since the restart (its own log, under the state dir).
    const logs = await Promise.all(
      Array.from({ length: syncs }, (_, i) =>
        readFile(
          join(root, "state-dp", reconcilerName("RepoSync", `density-${i}`, "repo-sync"), "reconciler.log"),
          "utf8",
        ).catch(() => ""),
      ),
    );
    return logs.every((log) =>
      log
        .split("\n")
        .some((l) => l.includes('"pass finished"') && Date.parse(/"time":"([^"]+)"/.exec(l)?.[1] ?? "") >= restartAt),
    );
  };
  await waitFor("all reconcilers passed after the restart", up, 1_800_000, 1_000);
  const restartToSyncedS = (performance.now() - t1) / 1000;
  const starts = await startTimes(manager.logFile, restartAt);
  const spreadS = starts.length === 0 ? NaN : (Math.max(...starts) - Math.min(...starts)) / 1000;
  const perSecond = new Map<number, number>();
  for (const t of starts) perSecond.set(Math.floor(t / 1000), (perSecond.get(Math.floor(t / 1000)) ?? 0) + 1);
  const mostInOneSecond = Math.max(0, ...perSecond.values());
  await stopManager(manager);
  // What stays once every process is gone (no connection), then without the ACL users, then without
  // BullMQ's scripts: the parts of used_memory that CLIENT LIST and MEMORY USAGE do not show.
  const redisLeft = await redisRemainder(redisAdmin, "dp");

  Object.assign(report, {
    process: {
      load,
      createdToSyncedS,
      restartToSyncedS,
      restartStartsSpreadS: spreadS,
      restartMostStartsInOneSecond: mostInOneSecond,
      reconcilers: pids.length,
      pssMiB: { median: median(pss), sum: pss.reduce((a, b) => a + b, 0) },
      rssMiB: { median: median(rss) },
      idleManagerMiB,
      managerRssMiB,
      managerPssMiB,
      redisPerSyncKiB,
      redisParts,
      redisLeft,
      watchesPerSync,
      requestsPerSyncPerMin,
      idleRequests: Object.fromEntries(idleRequests),
    },
  });
  lines.push(
    `| process mode | ${syncs} RepoSyncs × ${objects} ConfigMaps | load ${load} |`,
    "| --- | --- | --- |",
    `| created → all Synced | ${round(createdToSyncedS)} s | |`,
    `| manager restart → every reconciler passed | ${round(restartToSyncedS)} s | starts spread over ${round(spreadS)} s, at most ${mostInOneSecond} in one second |`,
    `| PSS per idle reconciler (median; RSS) | ${round(median(pss))} MiB (${round(median(rss))} MiB) | sum ${Math.round(pss.reduce((a, b) => a + b, 0))} MiB over ${pids.length} |`,
    `| manager | RSS ${Math.round(managerRssMiB)} MiB, PSS ${Math.round(managerPssMiB)} MiB | idle before the syncs: ${Math.round(idleManagerMiB)} MiB RSS |`,
    `| Redis per sync | ${round(redisPerSyncKiB)} KiB | used_memory growth ÷ syncs |`,
    `| API server watches per sync | ${round(watchesPerSync, 2)} | apiserver_longrunning_requests WATCH growth ÷ syncs |`,
    `| API requests per idle sync per minute | ${round(requestsPerSyncPerMin, 2)} | ${verbCell(idleRequests)} over ${idleSeconds} s |`,
    "",
    ...breakdownLines(redisParts, syncs, redisInfoBefore),
    ...remainderLines(redisParts.info, redisLeft, redisInfoBefore, syncs),
    `| Redis per sync, the manager's own share left out | ${round(((redisParts.info["used_memory"] ?? 0) - (redisManagerOnly["used_memory"] ?? 0)) / syncs / 1024)} KiB | growth since the manager was up, ÷ syncs |`,
    "",
  );
}

async function deploymentMode(): Promise<void> {
  const selector = "bench.driftless.dev/density=deployment";
  const load = await loadAverage();
  const manager = await startManager("deployment", "dd", selector);
  const idleMiB = await statusMiB(manager.pid, "VmRSS");
  const before = await apiserverMetrics(client);
  const managerBefore = await managerRequests(manager);
  const created = new Map<string, number>();
  for (let i = 0; i < managerSyncs; i++) {
    const namespace = `managed-${i}`;
    await createRepoSync(namespace, { "bench.driftless.dev/density": "deployment" }, "https://git.invalid/repo.git");
    created.set(namespace, Date.now());
  }
  // Reconcile latency: creation until the manager's Deployment for the sync exists.
  const latencies = new Map<string, number>();
  await waitFor(
    `${managerSyncs} reconciler Deployments`,
    async () => {
      const list = await client.list(deployments, { namespace: "config-management-system" });
      for (const d of list.items) {
        const ns = [...created.keys()].find((n) => reconcilerName("RepoSync", n, "repo-sync") === d.metadata.name);
        const at = ns === undefined ? undefined : created.get(ns);
        if (ns !== undefined && at !== undefined && !latencies.has(ns))
          latencies.set(ns, Date.parse(d.metadata.creationTimestamp ?? "") - at);
      }
      return latencies.size >= managerSyncs;
    },
    1_800_000,
    2_000,
  );
  await delay(20_000);
  const rssMiB = await statusMiB(manager.pid, "VmRSS");
  const peakMiB = await statusMiB(manager.pid, "VmHWM");
  const after = await apiserverMetrics(client);
  const writes = difference(after.requests, before.requests);
  const managerAfter = await managerRequests(manager);
  const own = difference(managerAfter.all, managerBefore.all);
  const ownFailed = difference(managerAfter.failed, managerBefore.failed);
  const [ownWrites, ownReads] = [requestsWhere(own, true), requestsWhere(own, false)];
  const lat = [...latencies.values()].sort((a, b) => a - b);
  const p = (q: number): number => (lat[Math.min(lat.length - 1, Math.floor(q * lat.length))] ?? NaN) / 1000;
  await stopManager(manager);
  Object.assign(report, {
    deployment: {
      load,
      managerSyncs,
      idleMiB,
      rssMiB,
      peakMiB,
      latencyS: { p50: p(0.5), p99: p(0.99) },
      requests: Object.fromEntries(writes),
      managerRequests: Object.fromEntries(own),
      managerRequestsFailed: Object.fromEntries(ownFailed),
    },
  });
  lines.push(
    `| deployment mode, manager alone | ${managerSyncs} RepoSyncs (pods pending) | load ${load} |`,
    "| --- | --- | --- |",
    `| manager RSS (peak) | ${Math.round(rssMiB)} MiB (${Math.round(peakMiB)} MiB) | idle before: ${Math.round(idleMiB)} MiB |`,
    `| created → Deployment exists | p50 ${round(p(0.5))} s, p99 ${round(p(0.99))} s | |`,
    `| the manager's writes, by verb and resource (per sync) | ${perSyncCell(ownWrites, ownFailed, managerSyncs)} | ${sumOf(ownWrites)} in all (${sumOf(requestsWhere(ownFailed, true))} failed), ${round(sumOf(ownWrites) / managerSyncs, 2)} per sync |`,
    `| the manager's reads and watches (per sync) | ${perSyncCell(ownReads, ownFailed, managerSyncs)} | ${sumOf(ownReads)} in all |`,
    `| API requests, all clients, while reconciling | ${verbCell(writes)} | includes the bench's own creates and lists |`,
    "",
  );
}

try {
  if (only === undefined || only === "process") await processMode();
  if (only === undefined || only === "deployment") await deploymentMode();
} finally {
  await closeRedisConnection(redisAdmin);
  await close();
}
console.log(lines.join("\n"));
const out = process.env["BENCH_OUT"];
if (out !== undefined) await writeFile(out, JSON.stringify({ benchmark: "density", ...report }, null, 2));
