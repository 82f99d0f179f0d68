/**
 * A control plane of a test file's own, for faults that are cluster-wide: an aggregated API that
 * stops answering makes every namespace deletion and every "is this namespace empty" check wait,
 * so on the shared control plane it would fail unrelated tests running beside it. Every support
 * helper in this test process (coreApi, adminClient, startReconciler, ...) then uses it; Redis stays
 * the run's. Call once, at the top level, before anything reads the test environment.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after } from "node:test";
import {
  apiRequest,
  defaultAdmissionPolicyFiles,
  defaultCrdDir,
  down,
  findRepoRoot,
  readState,
  startProcess,
  stopProcess,
  up,
  type ClusterState,
} from "@driftless/local-cluster";
import { eventually } from "./eventually.ts";
import { controlPlaneOf, type TestEnvironment } from "./env.ts";

export interface PrivateControlPlane {
  readonly stateDir: string;
  readonly cluster: ClusterState;
}

/**
 * `withNode` adds a node (kubelet, containerd, CNI bridge, kube-proxy, scheduler). There is one per
 * machine, so a second file asking for one waits until the first has torn its cluster down.
 */
export async function usePrivateControlPlane(
  options: { readonly withNode?: boolean } = {},
): Promise<PrivateControlPlane> {
  const sharedFile = process.env["DRIFTLESS_TEST_ENV"];
  if (sharedFile === undefined) throw new Error("no test environment: run through npm run test:integration");
  const shared = JSON.parse(readFileSync(sharedFile, "utf8")) as TestEnvironment;
  // Under the run's folder, so the run's clean-up and CI's leaked-process check cover it too.
  const stateDir = join(shared.runDir, `private-${process.pid}`);
  const cluster = await up({
    stateDir,
    crdDir: defaultCrdDir(findRepoRoot()),
    admissionPolicyFiles: defaultAdmissionPolicyFiles(findRepoRoot()),
    detached: false,
    quiet: true,
    withNode: options.withNode ?? false,
    // One node per machine: test files that want one take turns.
    waitForNodeSlotMs: 10 * 60_000,
  });
  after(() => down(stateDir));
  const env: TestEnvironment = {
    ...shared,
    ...controlPlaneOf(cluster),
    pids: [...shared.pids, ...cluster.processes.map((p) => p.pid)],
  };
  const file = join(shared.runDir, `env-private-${process.pid}.json`);
  writeFileSync(file, JSON.stringify(env, null, 2));
  process.env["DRIFTLESS_TEST_ENV"] = file;
  return { stateDir, cluster };
}

/**
 * Stops one process of the plane (SIGTERM, as a node's shutdown would), runs `whileDown`, then starts it
 * again with the same command line (same ports, data and certificates) and resolves once it serves:
 * etcd's /health, or the API server's /readyz. The new pid goes to the state file, so teardown stops it.
 */
export async function restartProcess(
  plane: PrivateControlPlane,
  name: "kube-apiserver" | "etcd",
  whileDown: () => Promise<void>,
): Promise<void> {
  const state = await readState(plane.stateDir);
  const record = state?.processes.find((p) => p.name === name);
  if (state === undefined || record === undefined) throw new Error(`no ${name} in ${plane.stateDir}`);
  await stopProcess(record.pid);
  // Started again even when `whileDown` fails, so the test's clean-up and the file's other tests still
  // have their plane; that failure is the one reported.
  const failed = await whileDown().then(
    () => undefined,
    (error: unknown) => ({ error }),
  );
  const [binary = "", ...args] = record.command;
  const started = await startProcess({ name, binary, args, logFile: record.logFile, detached: false });
  const processes = state.processes.map((p) => (p === record ? started : p));
  await writeFile(join(plane.stateDir, "state.json"), JSON.stringify({ ...state, processes }, null, 2) + "\n", {
    mode: 0o600,
  });
  const ca = await readFile(state.caFile, "utf8");
  await eventually(
    async () =>
      name === "etcd"
        ? (await fetch(`${state.etcdUrl}/health`)).ok
        : (
            await apiRequest({
              server: state.server,
              ca,
              token: state.identities.admin.token,
              method: "GET",
              path: "/readyz",
              timeoutMs: 2_000,
            })
          ).status === 200,
    { timeoutMs: 60_000, what: `${name} serving again` },
  );
  if (failed !== undefined) throw failed.error;
}
