/**
 * `npm run demo`: a local control plane, Redis and the manager in process mode, a Git repository
 * with a few manifests, a RootSync and a RepoSync on it, and then, live: objects appearing, a
 * commit updating them, a removed file pruned, a manual edit reverted, and both syncs' status.
 * Everything stays running; `npm run demo -- stop` stops it. scripts/demo.sh installs what this needs.
 */
import { spawn, execFileSync } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { openSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { createServer } from "node:net";
import { parseAllDocuments } from "yaml";
import { KubeClient, RestMapper, type KubeObject, type ResourceMapping } from "@driftless/kube";
import {
  defaultAdmissionPolicyFiles,
  defaultCrdDir,
  defaultStateDir,
  down,
  findRepoRoot,
  isAlive,
  startRedis,
  stopProcess,
  up,
} from "@driftless/local-cluster";
import { LiveView } from "./live-view.ts";
import { configMaps, namespaces, repoSyncs, rootSyncs } from "./mappings.ts";
import { configMap, initialFiles, platformNamespace, teamNamespace } from "./repo-content.ts";

const root = findRepoRoot();
const demoDir = join(root, ".local", "demo");
const stateFile = join(demoDir, "state.json");
// The same control plane as `npm run cluster:up` (DRIFTLESS_CLUSTER_DIR moves it, as there).
const clusterDir = process.env["DRIFTLESS_CLUSTER_DIR"] ?? defaultStateDir(root);
const systemNamespace = "config-management-system";
const queuePrefix = "demo";

interface DemoState {
  readonly managerPid: number;
  readonly redisPid: number;
  readonly redisUrl: string;
  readonly metricsPort: number;
  readonly webhookPort: number;
}

function step(text: string): void {
  process.stdout.write(`\n==> ${text}\n`);
}

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch {
      // not yet
    }
    if (Date.now() > deadline)
      throw new Error(
        `demo: ${what} did not happen within ${timeoutMs / 1000} s (manager log: ${join(demoDir, "manager.log")})`,
      );
    await delay(200);
  }
}

async function readState(): Promise<DemoState | undefined> {
  try {
    return JSON.parse(await readFile(stateFile, "utf8")) as DemoState;
  } catch {
    return undefined;
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=driftless demo", "-c", "user.email=demo@driftless.invalid", ...args], {
    cwd,
    encoding: "utf8",
  }).trim();
}

async function applyManifest(client: KubeClient, mapper: RestMapper, file: string): Promise<void> {
  for (const doc of parseAllDocuments(await readFile(join(root, "manifests", file), "utf8"))) {
    const obj = doc.toJS() as KubeObject | null;
    if (obj === null) continue;
    const m = await mapper.mappingFor(obj.apiVersion, obj.kind);
    if (m === undefined) throw new Error(`demo: ${obj.kind} is not served`);
    await client.patch(m, m.namespaced ? obj.metadata.namespace : undefined, obj.metadata.name, obj, "apply", {
      fieldManager: "driftless-demo",
      force: true,
    });
  }
}

/** Stops what a previous demo left running: the manager first (it stops its reconcilers), then Redis. */
async function stopPrevious(): Promise<void> {
  const state = await readState();
  if (state === undefined) return;
  if (isAlive(state.managerPid)) await stopProcess(state.managerPid);
  if (isAlive(state.redisPid)) await stopProcess(state.redisPid);
  await rm(stateFile, { force: true });
}

async function stop(): Promise<void> {
  await stopPrevious();
  const stopped = await down(clusterDir);
  process.stdout.write(`demo stopped (manager, Redis${stopped.length > 0 ? ", control plane" : ""})\n`);
}

async function deleteAndWait(
  client: KubeClient,
  m: ResourceMapping,
  namespace: string | undefined,
  name: string,
): Promise<void> {
  if (!(await client.delete(m, namespace, name))) return;
  await until(`${m.kind} ${name} deleted`, async () => (await client.get(m, namespace, name)) === undefined);
}

async function main(): Promise<void> {
  const started = Date.now();
  process.stdout.write("driftless demo: GitOps with the Config Sync API, on a real local control plane\n");
  await stopPrevious();
  await mkdir(demoDir, { recursive: true });

  step(
    "local control plane (etcd, kube-apiserver, kube-controller-manager; the first run builds them from Go modules, several minutes)",
  );
  const cluster = await up({
    stateDir: clusterDir,
    crdDir: defaultCrdDir(root),
    admissionPolicyFiles: defaultAdmissionPolicyFiles(root),
    detached: true,
  });
  process.stdout.write(`    ready at ${cluster.server}\n`);
  const client = await KubeClient.fromKubeconfig(cluster.kubeconfig);
  const mapper = new RestMapper(client);
  for (const file of ["namespace.yaml", "manager-rbac.yaml", "reconciler-rbac.yaml"])
    await applyManifest(client, mapper, file);

  step("Redis (the queues)");
  const redis = await startRedis({ dir: join(demoDir, "redis"), detached: true });
  process.stdout.write(`    ${redis.url}\n`);

  step("driftless-manager in process mode (one reconciler child process per sync)");
  const metricsPort = await freePort();
  const webhookPort = await freePort();
  const webhookSecret = randomBytes(16).toString("hex");
  await writeFile(join(demoDir, "webhook-secret"), webhookSecret, { mode: 0o600 });
  const logFile = join(demoDir, "manager.log");
  const log = openSync(logFile, "w");
  const manager = spawn(
    process.execPath,
    [
      join(root, "apps", "manager", "src", "main.ts"),
      "--kubeconfig",
      cluster.kubeconfig,
      "--redis-url",
      redis.url,
      "--reconciler-mode",
      "process",
      "--metrics-port",
      String(metricsPort),
      "--webhook-port",
      String(webhookPort),
      "--webhook-secret-file",
      join(demoDir, "webhook-secret"),
      "--queue-prefix",
      queuePrefix,
      "--state-dir",
      join(demoDir, "reconcilers"),
      "--allow-file-repos",
    ],
    // The admin password in the environment, never a flag (`ps`); each reconciler gets a Redis user of its own.
    { detached: true, stdio: ["ignore", log, log], env: { ...process.env, REDIS_PASSWORD: redis.password } },
  );
  manager.unref();
  const state: DemoState = {
    managerPid: manager.pid ?? 0,
    redisPid: redis.process.pid,
    redisUrl: redis.url,
    metricsPort,
    webhookPort,
  };
  await writeFile(stateFile, JSON.stringify(state, null, 2));
  await until("the manager ready", async () => (await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).ok, 60_000);
  process.stdout.write(
    `    pid ${state.managerPid}; metrics http://127.0.0.1:${metricsPort}/metrics; webhooks http://127.0.0.1:${webhookPort}/webhook; log ${logFile}\n`,
  );

  // A fresh start: whatever an earlier demo synced goes, through the manager (finalizers and all).
  await deleteAndWait(client, repoSyncs, teamNamespace, "repo-sync");
  await deleteAndWait(client, rootSyncs, systemNamespace, "root-sync");
  await deleteAndWait(client, namespaces, undefined, teamNamespace);
  await deleteAndWait(client, namespaces, undefined, platformNamespace);

  step("a Git repository with a few manifests");
  const repoDir = join(demoDir, "repo");
  await rm(repoDir, { recursive: true, force: true });
  const remote = join(repoDir, "remote.git");
  const work = join(repoDir, "work");
  execFileSync("git", ["init", "-q", "--bare", "-b", "main", remote]);
  execFileSync("git", ["init", "-q", "-b", "main", work]);
  git(work, "remote", "add", "origin", remote);
  const write = async (path: string, content: string): Promise<void> => {
    await mkdir(join(work, path, ".."), { recursive: true });
    await writeFile(join(work, path), content);
  };
  const commit = async (message: string): Promise<string> => {
    git(work, "add", "-A");
    git(work, "commit", "-q", "-m", message);
    // -u: the closing instructions' plain `git push` needs an upstream.
    git(work, "push", "-q", "-u", "origin", "main");
    const sha = git(work, "rev-parse", "HEAD");
    // Tell the manager at once (a signed push webhook); polling every 15 s would get there too.
    const body = JSON.stringify({ repo: `file://${remote}`, branch: "main", commit: sha });
    const signature = `sha256=${createHmac("sha256", webhookSecret).update(body).digest("hex")}`;
    await fetch(`http://127.0.0.1:${webhookPort}/webhook`, {
      method: "POST",
      body,
      headers: { "x-driftless-signature": signature },
    }).catch(() => undefined);
    return sha;
  };
  for (const [path, content] of Object.entries(initialFiles())) await write(path, content);
  const first = await commit("platform and team configuration");
  for (const path of Object.keys(initialFiles())) process.stdout.write(`    ${path}\n`);
  process.stdout.write(`    commit ${first.slice(0, 7)} in ${remote}\n`);

  const view = new LiveView(client, [platformNamespace, teamNamespace]);
  await view.poll();
  view.start();
  const git0 = { repo: `file://${remote}`, branch: "main", auth: "none", period: "15s" };

  step(
    `RootSync root-sync → platform/ (cluster-wide: it creates the namespaces ${platformNamespace} and ${teamNamespace})`,
  );
  await client.create(rootSyncs, {
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RootSync",
    metadata: { name: "root-sync", namespace: systemNamespace },
    spec: { sourceFormat: "unstructured", git: { ...git0, dir: "platform" } },
  });
  await until("the team namespace", async () => (await client.get(namespaces, undefined, teamNamespace)) !== undefined);
  await view.poll();

  step(
    `RepoSync ${teamNamespace}/repo-sync → team/ (its reconciler may do only what platform/team-reconciler-rolebinding.yaml grants it in ${teamNamespace})`,
  );
  await client.create(repoSyncs, {
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RepoSync",
    metadata: { name: "repo-sync", namespace: teamNamespace },
    spec: { sourceFormat: "unstructured", git: { ...git0, dir: "team" } },
  });
  const synced = (m: ResourceMapping, ns: string, sha: string) =>
    until(`${m.kind} ${ns} synced at ${sha.slice(0, 7)}`, async () => {
      const sync = await client.get(m, ns, m === rootSyncs ? "root-sync" : "repo-sync");
      return (sync?.["status"] as Record<string, unknown> | undefined)?.["lastSyncedCommit"] === sha;
    });
  await synced(rootSyncs, systemNamespace, first);
  await synced(repoSyncs, teamNamespace, first);
  await view.poll();

  step("a commit: platform-config color blue → green, replicas 3 → 5");
  await write(
    "platform/platform-config.yaml",
    configMap("platform-config", platformNamespace, { color: "green", replicas: "5" }),
  );
  const pushedAt = Date.now();
  const second = await commit("platform-config: green, 5 replicas");
  await synced(rootSyncs, systemNamespace, second);
  await view.poll();
  process.stdout.write(`    synced ${((Date.now() - pushedAt) / 1000).toFixed(1)} s after the push\n`);

  step("a removed file: platform/feature-flags.yaml is deleted from Git");
  await rm(join(work, "platform", "feature-flags.yaml"));
  const third = await commit("drop the feature flags");
  await synced(rootSyncs, systemNamespace, third);
  await until(
    "feature-flags pruned",
    async () => (await client.get(configMaps, platformNamespace, "feature-flags")) === undefined,
  );
  await view.poll();

  step("a manual edit: someone sets color=red on platform-config with kubectl");
  const live = await client.get(configMaps, platformNamespace, "platform-config");
  if (live === undefined) throw new Error("demo: platform-config is missing");
  const edited = { ...(live["data"] as Record<string, string>), color: "red" };
  await client.replace(configMaps, { ...live, data: edited });
  const editedAt = Date.now();
  const text = (data: Record<string, string>): string =>
    Object.entries(data)
      .map(([k, v]) => `${k}=${v}`)
      .join(", ");
  view.line("~", `ConfigMap ${platformNamespace}/platform-config {${text(edited)}}   <- edited by hand`);
  const reverted = await until("the edit reverted", async () => {
    const data = (await client.get(configMaps, platformNamespace, "platform-config"))?.["data"] as
      Record<string, string> | undefined;
    return data?.["color"] === "green" ? data : undefined;
  });
  const revertMs = Date.now() - editedAt;
  view.line(
    "~",
    `ConfigMap ${platformNamespace}/platform-config {${text(reverted)}}   <- reverted by driftless ${revertMs} ms later (Git says green)`,
  );
  await view.poll();
  view.stop();

  step("status of both syncs");
  const rows = [
    ["KIND", "NAMESPACE/NAME", "RECONCILER", "LAST SYNCED", "SYNCING", "ERRORS"],
    ...(await Promise.all(
      (
        [
          [rootSyncs, systemNamespace, "root-sync"],
          [repoSyncs, teamNamespace, "repo-sync"],
        ] as const
      ).map(async ([m, ns, name]) => {
        const sync = await client.get(m, ns, name);
        const status = (sync?.["status"] ?? {}) as {
          reconciler?: string;
          lastSyncedCommit?: string;
          conditions?: { type: string; status: string; message?: string; errorSummary?: { totalCount?: number } }[];
        };
        const syncing = status.conditions?.find((c) => c.type === "Syncing");
        return [
          m.kind,
          `${ns}/${name}`,
          status.reconciler ?? "",
          (status.lastSyncedCommit ?? "").slice(0, 7),
          `${syncing?.status ?? "?"} (${syncing?.message ?? ""})`,
          String(syncing?.errorSummary?.totalCount ?? 0),
        ];
      }),
    )),
  ];
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  for (const row of rows) process.stdout.write(`    ${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  ")}\n`);

  client.close();
  process.stdout.write(`
Done in ${Math.round((Date.now() - started) / 1000)} s. Everything is still running:
    export KUBECONFIG=${cluster.kubeconfig}
    edit ${work}, then: git -C ${work} commit -am "..." && git -C ${work} push   (synced within 15 s by polling)
    status of every sync: npx driftless status   (npx runs the project's Node 24; also console, sync, suspend, resume)
    manager log: ${logFile}; reconciler logs: ${join(demoDir, "reconcilers")}/*/reconciler.log
Stop it all with: npm run demo -- stop
`);
}

const command = process.argv[2];
(command === "stop" ? stop() : main()).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
