/**
 * `npm run bench node-pods`: many RepoSyncs in deployment mode on a real node. The install path of
 * test/e2e/install-path.test.ts (the images `npm run image:build` makes, imported into the node's
 * containerd; `manifests/` applied with the one overlay a node without cluster DNS needs), then
 * NODE_PODS_SYNCS (40) RepoSyncs, each in a namespace of its own with 3 ConfigMaps from a folder of one
 * repository served on the node bridge. Reports how many reconciler pods the node ran, the time from
 * creating the RepoSyncs until all are synced, and each reconciler pod's working set from the kubelet's
 * summary 30 s after the last one synced (idle), beside the manager's.
 *
 * Needs root and the node's Debian packages (scripts/node/setup.sh), as the install-path e2e does.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { setTimeout as delay } from "node:timers/promises";
import { parseAllDocuments } from "yaml";
import { nsReconcilerName, RootSyncNamespace, SyncLabel } from "@driftless/api";
import { namespaceMapping, RestMapper, type KubeObject, type ResourceMapping } from "@driftless/kube";
import { ensureNodeBinaries, findRepoRoot, importImage, nodeNetwork } from "@driftless/local-cluster";
import { startGitHttpServer } from "@driftless/git/testing";
import { writeNodeOverlay } from "../support/node-overlay.ts";
import { grantRepoSyncReconciler } from "../support/rbac.ts";
import { BenchRepo, loadAverage, waitFor } from "./bench-process.ts";
import { repoSyncMapping, startBenchCluster } from "./bench-cluster.ts";

const run = promisify(execFile);
const syncs = Number(process.env["NODE_PODS_SYNCS"] ?? 40);
const objects = 3;
const repoRoot = findRepoRoot();
const system = RootSyncNamespace;
const version = (JSON.parse(await readFile(join(repoRoot, "package.json"), "utf8")) as { version: string }).version;
const pods: ResourceMapping = { group: "", version: "v1", kind: "Pod", resource: "pods", namespaced: true, verbs: [] };
const secrets: ResourceMapping = { ...pods, kind: "Secret", resource: "secrets" };

if (process.getuid?.() !== 0) throw new Error("bench: the node (kubelet, containerd, CNI, iptables) runs as root");
await ensureNodeBinaries({ quiet: true });
await run("bash", ["scripts/image/build.sh", "--no-import"], { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 });
const { root, client, close } = await startBenchCluster("node-pods", {}, { withNode: true });
const mapper = new RestMapper(client);

/** Server-side applies every object of a YAML stream, as `kubectl apply` would. */
async function applyYaml(yaml: string): Promise<void> {
  for (const doc of parseAllDocuments(yaml)) {
    const obj = doc.toJS() as KubeObject;
    const m = await mapper.mappingFor(obj.apiVersion, obj.kind);
    if (m === undefined) throw new Error(`bench: ${obj.kind} not served`);
    const namespace = m.namespaced ? obj.metadata.namespace : undefined;
    await client.patch(m, namespace, obj.metadata.name, obj, "apply", { fieldManager: "bench", force: true });
  }
}

interface PodRow {
  readonly podRef: { readonly name: string; readonly namespace: string };
  readonly memory?: { readonly workingSetBytes?: number };
}

async function kubeletPods(): Promise<PodRow[]> {
  const summary = await client.request<{ pods?: PodRow[] }>({
    method: "GET",
    path: `/api/v1/nodes/${nodeNetwork.nodeName}/proxy/stats/summary`,
  });
  return (summary.pods ?? []).filter((p) => p.podRef.namespace === system);
}

const isReady = (pod: KubeObject): boolean =>
  ((pod["status"] as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).some(
    (c) => c.type === "Ready" && c.status === "True",
  );

async function readyPods(selector: string): Promise<number> {
  return (await client.list(pods, { namespace: system, labelSelector: selector })).items.filter(isReady).length;
}

/** Pods the scheduler could not place: what "as many as the node takes" ends at (each asks 50m of CPU). */
async function unschedulablePods(selector: string): Promise<number> {
  const unschedulable = (pod: KubeObject): boolean =>
    (
      (pod["status"] as { conditions?: { type: string; status: string; reason?: string }[] } | undefined)?.conditions ??
      []
    ).some((c) => c.type === "PodScheduled" && c.status === "False" && c.reason === "Unschedulable");
  return (await client.list(pods, { namespace: system, labelSelector: selector })).items.filter(unschedulable).length;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const mib = (bytes: number): string => (bytes / 1048576).toFixed(1);

try {
  for (const archive of [`driftless-${version}.tar`, "redis-7.0-bookworm.tar"])
    await importImage(join(repoRoot, ".local", "image", archive));

  // The install: the namespace and its two Secrets (manager.yaml's header), then manifests/ with the overlay.
  await client.create(namespaceMapping, { apiVersion: "v1", kind: "Namespace", metadata: { name: system } });
  for (const [name, key] of [
    ["driftless-redis", "password"],
    ["driftless-webhook", "secret"],
  ] as const)
    await client.create(secrets, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name, namespace: system },
      stringData: { [key]: randomBytes(16).toString("hex") },
    });
  const overlay = await writeNodeOverlay(join(root, "overlay"), join(repoRoot, "manifests"));
  const bin = join(repoRoot, ".local", "bin");
  const tools = (await readdir(bin)).find((n) => n.startsWith("render-kustomize-")) ?? "";
  const built = await run(join(bin, tools, "kustomize"), ["build", overlay], { maxBuffer: 64 * 1024 * 1024 });
  await applyYaml(built.stdout);
  await waitFor(
    "Redis and both managers Ready",
    async () => {
      const ready =
        (await readyPods("app.kubernetes.io/name=redis")) === 1 &&
        (await readyPods("app.kubernetes.io/name=reconciler-manager")) === 2;
      return ready;
    },
    300_000,
  );

  // One repository, a folder per sync, served where pods reach the host.
  const repo = new BenchRepo(root, "teams");
  const namespaces = Array.from({ length: syncs }, (_, i) => `pods-${i}`);
  for (const ns of namespaces)
    for (let j = 0; j < objects; j++) {
      await mkdir(join(repo.work, ns), { recursive: true });
      const cm = {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: `cm-${j}`, namespace: ns },
        data: { j: `${j}` },
      };
      await writeFile(join(repo.work, ns, `cm-${j}.yaml`), JSON.stringify(cm));
    }
  const commit = repo.commitAndPush("a folder per team");
  const server = await startGitHttpServer({ projectRoot: root, host: nodeNetwork.bridgeAddress });

  const load = await loadAverage();
  const t0 = performance.now();
  for (const ns of namespaces) {
    await client.create(namespaceMapping, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    await grantRepoSyncReconciler(ns, { client });
    await client.create(repoSyncMapping, {
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RepoSync",
      metadata: { name: "repo-sync", namespace: ns },
      spec: {
        sourceFormat: "unstructured",
        git: { repo: server.url("teams.git"), branch: "main", dir: ns, auth: "none" },
      },
    });
  }
  const syncedAt = new Map<string, number>();
  await waitFor(
    `${syncs} RepoSyncs synced`,
    async () => {
      for (const ns of namespaces) {
        if (syncedAt.has(ns)) continue;
        const status = (await client.get(repoSyncMapping, ns, "repo-sync"))?.["status"] as
          { lastSyncedCommit?: string } | undefined;
        if (status?.lastSyncedCommit === commit) syncedAt.set(ns, (performance.now() - t0) / 1000);
      }
      // A sync whose pod the node cannot take never syncs: the run ends when every other one has.
      return syncedAt.size > 0 && syncedAt.size + (await unschedulablePods(SyncLabel.Reconciler)) === syncs;
    },
    900_000,
    1000,
  );
  const allSynced = Math.max(...syncedAt.values());

  // Idle: past the memory-reducing collection that follows each full pass (and the readiness probes' period).
  await delay(30_000);
  const running = await readyPods(SyncLabel.Reconciler);
  const unplaced = await unschedulablePods(SyncLabel.Reconciler);
  const summary = await kubeletPods();
  const reconcilerNames = new Set(namespaces.map((ns) => nsReconcilerName(ns, "repo-sync")));
  const reconcilers = summary
    .filter((p) => [...reconcilerNames].some((name) => p.podRef.name.startsWith(`${name}-`)))
    .map((p) => p.memory?.workingSetBytes ?? 0)
    .filter((bytes) => bytes > 0);
  const managers = summary
    .filter((p) => p.podRef.name.startsWith("reconciler-manager-"))
    .map((p) => mib(p.memory?.workingSetBytes ?? 0));
  await server.close();

  console.log(`| deployment mode on a real node | ${syncs} RepoSyncs × ${objects} ConfigMaps | load ${load} |`);
  console.log("| --- | --- | --- |");
  console.log(`| reconciler pods Ready | ${running} of ${syncs} | ${unplaced} unschedulable (the node's CPU) |`);
  console.log(
    `| created → all of them Synced | ${allSynced.toFixed(1)} s | ${syncedAt.size} synced, median ${median([...syncedAt.values()]).toFixed(1)} s |`,
  );
  console.log(
    `| reconciler pod working set, idle (kubelet summary) | median ${mib(median(reconcilers))} MiB | ${reconcilers.length} pods, ${mib(Math.min(...reconcilers))}–${mib(Math.max(...reconcilers))} MiB, sum ${mib(reconcilers.reduce((a, b) => a + b, 0))} MiB |`,
  );
  console.log(`| manager pods' working set | ${managers.join(", ")} MiB | |`);
} finally {
  await close();
}
