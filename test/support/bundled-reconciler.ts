/**
 * The production form of a reconciler for e2e tests: the bundle (rebuilt first, so it is never stale),
 * run with the Node flags and environment the manager gives every reconciler, syncing `repo-sync` in a
 * test namespace.
 */
import { execFileSync, spawn, type ChildProcessByStdio } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import type { TestContext } from "node:test";
import { reconcilerEnvironment, reconcilerNodeFlags } from "@driftless/controller";
import { findRepoRoot } from "@driftless/local-cluster";
import { testEnv } from "./env.ts";
import { TestRepo } from "./git.ts";
import { suffix, testNamespace } from "./kube.ts";
import { createRepoSync, repoSyncSyncedTo, type RepoSyncOptions } from "./sync.ts";
import { removeAfter } from "./cleanup.ts";

export const reconcilerBundle = join(findRepoRoot(), "dist", "driftless-reconciler.mjs");

export function buildReconcilerBundle(): void {
  execFileSync(process.execPath, [join(findRepoRoot(), "scripts", "bundle.ts")], { stdio: "inherit" });
}

export interface BundledReconcilerOptions {
  /** Node flags before the bundle, after the manager's. */
  readonly nodeFlags?: readonly string[];
  /** Reconciler flags after the ones every test needs. */
  readonly args?: readonly string[];
  /** Environment over the manager's. */
  readonly env?: Readonly<Record<string, string>>;
}

export interface BundledReconciler {
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  /** Its stdout and stderr so far, interleaved. */
  readonly output: () => string;
  /** The exit code, once it has exited and its stdout and stderr are read to the end. */
  readonly exited: Promise<number | null>;
  /** A scratch directory removed when the test ends (its cache lives in `cache/` there). */
  readonly dir: string;
}

/** Starts the bundled reconciler of the RepoSync `repo-sync` in `namespace`; killed when the test ends. */
export async function spawnBundledReconciler(
  t: TestContext,
  namespace: string,
  options: BundledReconcilerOptions = {},
): Promise<BundledReconciler> {
  const dir = await mkdtemp(join(tmpdir(), "driftless-e2e-"));
  removeAfter(t, dir);
  const child = spawn(
    process.execPath,
    [
      ...reconcilerNodeFlags(),
      ...(options.nodeFlags ?? []),
      reconcilerBundle,
      "--sync-kind=RepoSync",
      "--sync-name=repo-sync",
      `--sync-namespace=${namespace}`,
      `--kubeconfig=${testEnv().kubeconfig}`,
      `--queue-prefix=e2e${suffix()}`,
      `--cache-dir=${join(dir, "cache")}`,
      "--allow-file-repos",
      ...(options.args ?? []),
    ],
    // The Redis password in the environment, as the manager gives it (a flag would show in `ps`).
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...reconcilerEnvironment, REDIS_URL: testEnv().redisUrl, ...options.env },
    },
  );
  const chunks: string[] = [];
  child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => chunks.push(chunk.toString()));
  // On 'close', not 'exit': 'exit' may come before the pipes are drained, and tests read the output once it has exited.
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  return { child, output: () => chunks.join(""), exited, dir };
}

/** Sends SIGTERM and returns the exit code. */
export async function stopBundledReconciler(reconciler: BundledReconciler): Promise<number | null> {
  reconciler.child.kill("SIGTERM");
  return reconciler.exited;
}

export interface SyncedBundledReconciler {
  readonly namespace: string;
  readonly commit: string;
  readonly reconciler: BundledReconciler;
}

/**
 * A test namespace whose RepoSync `repo-sync` declares one ConfigMap (`a`), and the bundled reconciler of
 * it, returned once it has synced that commit.
 */
export async function syncedBundledReconciler(
  t: TestContext,
  options: BundledReconcilerOptions & { readonly repoSync?: RepoSyncOptions } = {},
): Promise<SyncedBundledReconciler> {
  const namespace = await testNamespace(t);
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/a.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" }, data: { k: "v" } }),
  );
  const commit = await repo.commit("a config map");
  await createRepoSync(namespace, repo, options.repoSync);
  const reconciler = await spawnBundledReconciler(t, namespace, options);
  await repoSyncSyncedTo(namespace, commit, { output: reconciler.output });
  return { namespace, commit, reconciler };
}
