/**
 * What every bench stands on: a fresh local control plane and Redis in a temporary directory, a client
 * of it, and the reconciler in its production form.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { crdMapping } from "@driftless/applier";
import { reconcilerEnvironment, reconcilerNodeFlags } from "@driftless/controller";
import { KubeClient, type KubeClientOptions } from "@driftless/kube";
import {
  defaultCrdDir,
  down,
  findRepoRoot,
  startRedis,
  stopProcess,
  up,
  type ClusterState,
  type RedisServer,
} from "@driftless/local-cluster";
import { rsyncMapping } from "@driftless/sync";

export interface BenchCluster {
  /** The temporary directory holding the cluster's and Redis's state; removed by close(). */
  readonly root: string;
  readonly cluster: ClusterState;
  readonly redis: RedisServer;
  readonly client: KubeClient;
  /** Stops Redis and the control plane and removes the directory. */
  readonly close: () => Promise<void>;
}

export async function startBenchCluster(
  name: string,
  clientOptions: KubeClientOptions = {},
  clusterOptions: { readonly withNode?: boolean } = {},
): Promise<BenchCluster> {
  const root = await mkdtemp(join(tmpdir(), `driftless-bench-${name}-`));
  const cluster = await up({
    stateDir: join(root, "cluster"),
    crdDir: defaultCrdDir(),
    detached: false,
    quiet: true,
    ...clusterOptions,
  });
  const redis = await startRedis({ dir: join(root, "redis"), detached: false });
  const client = await KubeClient.fromKubeconfig(cluster.kubeconfig, clientOptions);
  const close = async (): Promise<void> => {
    client.close();
    await stopProcess(redis.process.pid);
    await down(join(root, "cluster"));
    await rm(root, { recursive: true, force: true });
  };
  return { root, cluster, redis, client, close };
}

/**
 * The reconciler's entry point: the bundle (scripts/bundle.ts, rebuilt here so it is never stale), or
 * the TypeScript sources with RECONCILER_ENTRY=src.
 */
export function reconcilerEntry(): string {
  const repoRoot = findRepoRoot();
  if (process.env["RECONCILER_ENTRY"] === "src") return join(repoRoot, "apps", "reconciler", "src", "main.ts");
  execFileSync(process.execPath, [join(repoRoot, "scripts", "bundle.ts")], { stdio: "inherit" });
  return join(repoRoot, "dist", "driftless-reconciler.mjs");
}

/** A reconciler process for a bench (spawnBenchReconciler). */
export interface BenchReconcilerOptions {
  /** The reconciler's entry point (reconcilerEntry()). */
  readonly entry: string;
  readonly sync: { readonly kind: "RootSync" | "RepoSync"; readonly namespace: string; readonly name: string };
  readonly metricsPort: number;
  /** Its queue prefix and the suffix of its cache folder: one per reconciler of a bench. */
  readonly key: string;
  /**
   * Every poll a full pass (`--resync-period=0`): the bench measures the whole pass, not the shortcut
   * an unchanged commit takes.
   */
  readonly everyPollFullPass?: boolean;
  /** Node's flags, when not the ones the manager starts a reconciler with. */
  readonly nodeFlags?: readonly string[];
  readonly extraArgs?: readonly string[];
}

/**
 * A reconciler process as the manager starts one (its Node flags and environment, Redis's password in
 * the environment) on a bench's cluster and Redis, logging JSON to its stdout (a pipe).
 */
export function spawnBenchReconciler(
  bench: Pick<BenchCluster, "cluster" | "redis" | "root">,
  options: BenchReconcilerOptions,
): ChildProcess {
  const { cluster, redis, root } = bench;
  const { sync, key } = options;
  return spawn(
    process.execPath,
    [
      ...(options.nodeFlags ?? reconcilerNodeFlags()),
      options.entry,
      `--sync-kind=${sync.kind}`,
      `--sync-name=${sync.name}`,
      `--sync-namespace=${sync.namespace}`,
      `--kubeconfig=${cluster.kubeconfig}`,
      `--queue-prefix=${key}`,
      `--metrics-port=${options.metricsPort}`,
      `--cache-dir=${join(root, `cache-${key}`)}`,
      "--allow-file-repos",
      ...(options.everyPollFullPass === true ? ["--resync-period=0"] : []),
      ...(options.extraArgs ?? []),
    ],
    {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, ...reconcilerEnvironment, REDIS_URL: redis.url, REDIS_PASSWORD: redis.password },
    },
  );
}

/** The sync kinds and CRDs, as the reconciler and applier map them. */
export const rootSyncMapping = rsyncMapping("RootSync");
export const repoSyncMapping = rsyncMapping("RepoSync");
export { crdMapping };
