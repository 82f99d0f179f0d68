/**
 * Manager benchmark on a real local control plane, Redis and git (see docs/benchmarks.md):
 * - commit → Synced latency when a signed push webhook announces the commit (goal p50 <= 1 s)
 * - the same latency with polling only (spec.git.period 15 s, Config Sync's default)
 * - memory per sync in process mode, manager plus reconciler processes, at 10, 50 and 100 RepoSyncs
 * The manager runs as a child process (driftless-manager, process mode), as in `npm run demo`.
 */
import { execFileSync, spawn } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { openSync } from "node:fs";
import { readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { parseAllDocuments } from "yaml";
import { managerEnvironment, managerNodeFlags } from "@driftless/controller";
import { namespaceMapping, RestMapper, type KubeObject } from "@driftless/kube";
import { grantRepoSyncReconciler } from "../support/rbac.ts";
import { findRepoRoot, freeLoopbackPort } from "@driftless/local-cluster";
import { repoSyncMapping, startBenchCluster } from "./bench-cluster.ts";

const repoRoot = findRepoRoot();
const latencyRounds = Number(process.env["BENCH_ROUNDS"] ?? 20);
const pollRounds = Number(process.env["BENCH_POLL_ROUNDS"] ?? 6);
const memorySizes = (process.env["BENCH_SYNC_COUNTS"] ?? "10,50,100").split(",").map(Number);
const { root, cluster, redis, client, close } = await startBenchCluster("manager");
const mapper = new RestMapper(client);
const namespaces = namespaceMapping;

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

// The manager.
const secret = randomBytes(16).toString("hex");
await writeFile(join(root, "webhook-secret"), secret);
const [metricsPort, webhookPort] = [await freeLoopbackPort(), await freeLoopbackPort()];
const queuePrefix = "bench";
const log = openSync(join(root, "manager.log"), "w");
// The production form: the bundles (scripts/bundle.ts, built here first); the bundled manager starts the
// bundled reconciler. MANAGER_ENTRY=src runs both from the TypeScript sources.
const fromSources = process.env["MANAGER_ENTRY"] === "src";
if (!fromSources) execFileSync(process.execPath, [join(repoRoot, "scripts", "bundle.ts")], { stdio: "inherit" });
const managerEntry = fromSources
  ? join(repoRoot, "apps", "manager", "src", "main.ts")
  : join(repoRoot, "dist", "driftless-manager.mjs");
const reconcilerCommand = fromSources ? "reconciler/src/main.ts" : "dist/driftless-reconciler.mjs";
const manager = spawn(
  process.execPath,
  [
    // As manifests/manager.yaml runs it.
    ...managerNodeFlags(),
    managerEntry,
    ...["--kubeconfig", cluster.kubeconfig, "--redis-url", redis.url, "--reconciler-mode", "process"],
    ...[
      "--metrics-port",
      String(metricsPort),
      "--webhook-port",
      String(webhookPort),
      "--webhook-secret-file",
      join(root, "webhook-secret"),
    ],
    ...["--queue-prefix", queuePrefix, "--state-dir", join(root, "state"), "--allow-file-repos", "--log-level", "warn"],
  ],
  { stdio: ["ignore", log, log], env: { ...process.env, ...managerEnvironment, REDIS_PASSWORD: redis.password } },
);
const managerPid = manager.pid ?? 0;

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs: number,
  intervalMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await delay(intervalMs);
  }
}
await until("manager ready", async () => (await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).ok, 60_000, 200);

// One git repository (bare remote + work tree), as a team would have.
const remote = join(root, "remote.git");
const work = join(root, "work");
const git = (...args: string[]): string =>
  execFileSync("git", ["-C", work, "-c", "user.name=bench", "-c", "user.email=bench@driftless.invalid", ...args], {
    encoding: "utf8",
  }).trim();
execFileSync("git", ["init", "-q", "--bare", "-b", "main", remote]);
execFileSync("git", ["init", "-q", "-b", "main", work]);
git("remote", "add", "origin", remote);
const repoUrl = `file://${remote}`;
let version = 0;
async function commit(): Promise<string> {
  version++;
  await writeFile(
    join(work, "cm.yaml"),
    JSON.stringify({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "bench" },
      data: { version: String(version) },
    }),
  );
  git("add", "-A");
  git("commit", "-q", "-m", `v${version}`);
  git("push", "-q", "origin", "main");
  return git("rev-parse", "HEAD");
}

async function createRepoSync(namespace: string, period: string): Promise<void> {
  await client.create(namespaces, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
  // As a namespace's admin does: the reconciler gets only its base role from the manager.
  await grantRepoSyncReconciler(namespace, { client });
  await client.create(repoSyncMapping, {
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RepoSync",
    metadata: { name: "repo-sync", namespace },
    spec: { sourceFormat: "unstructured", git: { repo: repoUrl, branch: "main", auth: "none", period } },
  });
}

async function syncedAt(namespace: string): Promise<string | undefined> {
  const sync = await client.get(repoSyncMapping, namespace, "repo-sync");
  return (sync?.["status"] as { lastSyncedCommit?: string } | undefined)?.lastSyncedCommit;
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function latency(
  namespace: string,
  rounds: number,
  notify: (sha: string) => Promise<void>,
  timeoutMs: number,
  beforeCommit: () => Promise<void> = () => Promise.resolve(),
): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < rounds; i++) {
    await beforeCommit();
    const sha = await commit();
    const pushed = performance.now();
    await notify(sha);
    await until(`commit ${sha.slice(0, 7)} synced`, async () => (await syncedAt(namespace)) === sha, timeoutMs);
    samples.push((performance.now() - pushed) / 1000);
  }
  return samples;
}

try {
  const first = await commit();
  // Webhook: polling every 10 minutes, so only the push explains a fast sync.
  await createRepoSync("bench-webhook", "10m");
  await until("first sync (webhook namespace)", async () => (await syncedAt("bench-webhook")) === first, 120_000, 100);
  const webhook = await latency(
    "bench-webhook",
    latencyRounds,
    async (sha) => {
      const body = JSON.stringify({ repo: repoUrl, branch: "main", commit: sha });
      const signature = `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
      const response = await fetch(`http://127.0.0.1:${webhookPort}/webhook`, {
        method: "POST",
        body,
        headers: { "x-driftless-signature": signature },
      });
      if (response.status !== 202) throw new Error(`webhook answered ${response.status}`);
    },
    30_000,
  );
  await client.delete(repoSyncMapping, "bench-webhook", "repo-sync");

  await createRepoSync("bench-poll", "15s");
  const head = git("rev-parse", "HEAD");
  await until("first sync (poll namespace)", async () => (await syncedAt("bench-poll")) === head, 120_000, 100);
  // Commits land at random moments of the poll cycle, as people's pushes do.
  const polling = await latency(
    "bench-poll",
    pollRounds,
    () => Promise.resolve(),
    60_000,
    () => delay(Math.random() * 15_000),
  );
  await client.delete(repoSyncMapping, "bench-poll", "repo-sync");
  await until(
    "bench syncs gone",
    async () =>
      (await client.get(repoSyncMapping, "bench-poll", "repo-sync")) === undefined &&
      (await client.get(repoSyncMapping, "bench-webhook", "repo-sync")) === undefined,
    60_000,
    200,
  );

  // Memory: RSS of the manager and of every reconciler process, after all syncs are synced.
  const rssMiB = async (pid: number): Promise<number> =>
    Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
  const reconcilerPids = async (): Promise<number[]> => {
    const pids: number[] = [];
    for (const entry of await readdir("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
      if (cmdline.includes(reconcilerCommand) && cmdline.includes(`--queue-prefix\0${queuePrefix}\0`))
        pids.push(Number(entry));
    }
    return pids;
  };
  const idleManager = await rssMiB(managerPid);
  const memory: {
    syncs: number;
    managerMiB: number;
    reconcilersMiB: number;
    perReconcilerMiB: number;
    perSyncMiB: number;
    startToSyncedS: number;
  }[] = [];
  let created = 0;
  const head2 = git("rev-parse", "HEAD");
  for (const target of memorySizes) {
    const started = performance.now();
    for (; created < target; created++) await createRepoSync(`bench-mem-${created}`, "15s");
    await until(
      `${target} syncs synced`,
      async () => {
        for (let i = 0; i < target; i++) if ((await syncedAt(`bench-mem-${i}`)) !== head2) return false;
        return true;
      },
      900_000,
      1_000,
    );
    const startToSyncedS = (performance.now() - started) / 1000;
    // Let start-up garbage settle: measure after the first polls, not during start.
    await delay(20_000);
    const pids = await reconcilerPids();
    const reconcilers = (await Promise.all(pids.map(rssMiB))).reduce((a, b) => a + b, 0);
    const managerMiB = await rssMiB(managerPid);
    memory.push({
      syncs: target,
      managerMiB: Math.round(managerMiB),
      reconcilersMiB: Math.round(reconcilers),
      perReconcilerMiB: Math.round((reconcilers / pids.length) * 10) / 10,
      perSyncMiB: Math.round(((managerMiB - idleManager + reconcilers) / target) * 10) / 10,
      startToSyncedS: Math.round(startToSyncedS * 10) / 10,
    });
  }

  const round = (s: number): string => `${s.toFixed(2)} s`;
  console.log("| commit → Synced | p50 | p90 | max | rounds |");
  console.log("| --- | --- | --- | --- | --- |");
  console.log(
    `| signed push webhook (period 10 min) | ${round(percentile(webhook, 50))} | ${round(percentile(webhook, 90))} | ${round(Math.max(...webhook))} | ${webhook.length} |`,
  );
  console.log(
    `| polling only (period 15 s) | ${round(percentile(polling, 50))} | ${round(percentile(polling, 90))} | ${round(Math.max(...polling))} | ${polling.length} |`,
  );
  console.log("");
  console.log(
    `| RepoSyncs (process mode) | manager RSS | reconcilers RSS (sum) | per reconciler | per sync (manager growth + reconciler) | added syncs created → all Synced |`,
  );
  console.log("| --- | --- | --- | --- | --- | --- |");
  for (const m of memory)
    console.log(
      `| ${m.syncs} | ${m.managerMiB} MiB | ${m.reconcilersMiB} MiB | ${m.perReconcilerMiB} MiB | ${m.perSyncMiB} MiB | ${m.startToSyncedS} s |`,
    );
  console.log(`\nidle manager RSS: ${Math.round(idleManager)} MiB`);
  const out = process.env["BENCH_OUT"];
  if (out !== undefined)
    await writeFile(
      out,
      JSON.stringify(
        { benchmark: "manager", webhookSeconds: webhook, pollingSeconds: polling, idleManagerMiB: idleManager, memory },
        null,
        2,
      ),
    );
} finally {
  manager.kill("SIGTERM");
  await new Promise((resolve) => manager.once("exit", resolve));
  await close();
}
