import { generateKeyPairSync } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { ensureBinaries } from "./binaries.ts";
import { installAdmissionPolicies } from "./admission-policies.ts";
import { installCrds } from "./crds.ts";
import { apiRequest } from "./http.ts";
import { newIdentities, tokenAuthFile, type Identities } from "./identities.ts";
import { renderKubeconfig } from "./kubeconfig.ts";
import { freeLoopbackPort } from "./ports.ts";
import { isAlive, startProcess, stopProcess, type ProcessRecord } from "./processes.ts";
import { tailLog } from "./logs.ts";
import {
  apiserverNodeArgs,
  controllerManagerNodeArgs,
  prepareNode,
  releaseNodeSlot,
  startNode,
  stopNode,
  type NodePreparation,
  type NodeState,
} from "./node/node.ts";
import { deleteBridge, nodeNetwork } from "./node/network.ts";

export interface ClusterOptions {
  /** Holds state.json, logs, data, certificates and the kubeconfigs. */
  readonly stateDir: string;
  /** CRDs installed before the controller manager starts (its garbage collector discovers types at start). */
  readonly crdDir?: string;
  /** Admission policies (manifests/reconciler-admission-policy.yaml) installed with the CRDs, as a cluster runs them. */
  readonly admissionPolicyFiles?: readonly string[];
  /** True for `cluster:up` (processes outlive the caller); false for a test run (killed with it). */
  readonly detached: boolean;
  readonly quiet?: boolean;
  /**
   * Adds a node: kube-scheduler, a kubelet on containerd and runc, a CNI bridge and kube-proxy, so
   * pods run. One node per machine. A running control plane started without one is not changed.
   */
  readonly withNode?: boolean;
  /** How long to wait for another cluster's node to go before refusing (tests queue; the CLI refuses at once). */
  readonly waitForNodeSlotMs?: number;
}

/** What a running local control plane is, as written to `<stateDir>/state.json`. */
export interface ClusterState {
  readonly server: string;
  readonly caFile: string;
  readonly kubeconfig: string;
  readonly userKubeconfig: string;
  readonly identities: Identities;
  readonly etcdUrl: string;
  readonly processes: readonly ProcessRecord[];
  readonly binDir: string;
  readonly startedAt: string;
  /** Present when the cluster has a node; its processes are also in `processes`. */
  readonly node?: NodeState;
}

const stateFileName = "state.json";

export async function readState(stateDir: string): Promise<ClusterState | undefined> {
  const file = join(stateDir, stateFileName);
  if (!existsSync(file)) return undefined;
  return JSON.parse(await readFile(file, "utf8")) as ClusterState;
}

/** True when every recorded process is alive and the apiserver answers /readyz. */
export async function isHealthy(state: ClusterState): Promise<boolean> {
  if (!state.processes.every((p) => isAlive(p.pid))) return false;
  try {
    const ca = await readFile(state.caFile, "utf8");
    const res = await apiRequest({
      server: state.server,
      ca,
      token: state.identities.admin.token,
      method: "GET",
      path: "/readyz",
      timeoutMs: 3_000,
    });
    return res.status === 200;
  } catch {
    return false;
  }
}

/**
 * Starts etcd, kube-apiserver and kube-controller-manager on free loopback ports, installs the CRDs
 * and writes kubeconfigs. Idempotent: a healthy cluster recorded in stateDir is returned as it is;
 * a half-dead one is stopped and started afresh.
 */
export async function up(options: ClusterOptions): Promise<ClusterState> {
  const existing = await readState(options.stateDir);
  if (existing !== undefined) {
    if (await isHealthy(existing)) {
      if (options.withNode === true && existing.node === undefined) {
        throw new Error(
          `local-cluster: the control plane in ${options.stateDir} runs without a node; a node needs the apiserver started for it: cluster:down, then cluster:up --with-node`,
        );
      }
      return existing;
    }
    await down(options.stateDir);
  }
  const binaries = await ensureBinaries({ quiet: options.quiet ?? false });
  let nodePrep: NodePreparation | undefined;
  if (options.withNode === true) {
    try {
      nodePrep = await prepareNode(options.stateDir, {
        quiet: options.quiet ?? false,
        waitForSlotMs: options.waitForNodeSlotMs ?? 0,
      });
    } catch (error) {
      await releaseNodeSlot(options.stateDir);
      throw error;
    }
  }
  const dirs = {
    logs: join(options.stateDir, "logs"),
    etcdData: join(options.stateDir, "etcd-data"),
    certs: join(options.stateDir, "certs"),
  };
  await rm(dirs.etcdData, { recursive: true, force: true });
  await rm(dirs.certs, { recursive: true, force: true });
  for (const dir of Object.values(dirs)) await mkdir(dir, { recursive: true });

  const started: ProcessRecord[] = [];
  try {
    const [etcdPort, etcdPeerPort, apiPort] = await distinctPorts(3);
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    started.push(
      await startProcess({
        name: "etcd",
        binary: binaries.etcd,
        logFile: join(dirs.logs, "etcd.log"),
        detached: options.detached,
        args: [
          `--data-dir=${dirs.etcdData}`,
          `--listen-client-urls=${etcdUrl}`,
          `--advertise-client-urls=${etcdUrl}`,
          `--listen-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
          `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
          `--initial-cluster=default=http://127.0.0.1:${etcdPeerPort}`,
          "--unsafe-no-fsync=true", // test data: durability is not worth the fsync latency
          "--log-level=warn",
        ],
      }),
    );
    await waitFor("etcd", started[0]!, 20_000, async () => (await fetch(`${etcdUrl}/health`)).ok);

    const identities = newIdentities(nodePrep !== undefined ? { nodeName: nodeNetwork.nodeName } : {});
    const tokenFile = join(dirs.certs, "tokens.csv");
    await writeFile(tokenFile, tokenAuthFile(identities), { mode: 0o600 });
    const saKeyFile = join(dirs.certs, "service-account.key");
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    await writeFile(saKeyFile, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });

    const server = `https://127.0.0.1:${apiPort}`;
    const apiserver = await startProcess({
      name: "kube-apiserver",
      binary: binaries.kubeApiserver,
      logFile: join(dirs.logs, "kube-apiserver.log"),
      detached: options.detached,
      args: [
        `--etcd-servers=${etcdUrl}`,
        ...(nodePrep !== undefined
          ? apiserverNodeArgs(nodePrep)
          : [
              "--bind-address=127.0.0.1",
              // Without it the apiserver looks for a default-route interface, which a sandbox may not have.
              "--advertise-address=127.0.0.1",
              "--authorization-mode=RBAC",
              // No kubelet runs pods here, and the ServiceAccount plugin would reject pods before the
              // serviceaccount controller creates "default".
              "--disable-admission-plugins=ServiceAccount",
            ]),
        `--secure-port=${apiPort}`,
        `--cert-dir=${dirs.certs}`,
        `--service-cluster-ip-range=${nodeNetwork.serviceCidr}`,
        `--token-auth-file=${tokenFile}`,
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        `--service-account-key-file=${saKeyFile}`,
        `--service-account-signing-key-file=${saKeyFile}`,
        "--allow-privileged=true",
        "--v=0",
      ],
    });
    started.push(apiserver);

    // Without a node the apiserver writes its self-signed serving certificate (with the CA that signed
    // it) at start; with one it serves the certificate the node's CA signed.
    const caFile = nodePrep !== undefined ? nodePrep.certs.caFile : join(dirs.certs, "apiserver.crt");
    await waitFor("kube-apiserver certificate", apiserver, 30_000, () => Promise.resolve(existsSync(caFile)));
    const ca = await readFile(caFile, "utf8");
    const conn = { server, ca, token: identities.admin.token };
    // Verbose, so a start that never gets ready says which of the server's checks held it back.
    let failingChecks = "";
    await waitFor("kube-apiserver /readyz", apiserver, 60_000, async () => {
      const res = await apiRequest({ ...conn, method: "GET", path: "/readyz?verbose", timeoutMs: 2_000 });
      if (res.status !== 200)
        failingChecks = res.body
          .split("\n")
          .filter((line) => line.startsWith("[-]"))
          .join("; ");
      return res.status === 200;
    }).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}; failing checks: ${failingChecks || "none answered"}`, {
        cause: error,
      });
    });

    const kubeconfig = join(options.stateDir, "kubeconfig");
    const userKubeconfig = join(options.stateDir, "kubeconfig-user");
    await writeFile(
      kubeconfig,
      renderKubeconfig({ server, caData: ca, identity: identities.admin, contextName: "driftless-admin" }),
      { mode: 0o600 },
    );
    await writeFile(
      userKubeconfig,
      renderKubeconfig({ server, caData: ca, identity: identities.user, contextName: "driftless-user" }),
      { mode: 0o600 },
    );

    if (options.crdDir !== undefined) await installCrds(conn, options.crdDir);
    const forNode = nodePrep !== undefined ? controllerManagerNodeArgs(caFile) : { controllers: [], args: [] };

    started.push(
      await startProcess({
        name: "kube-controller-manager",
        binary: binaries.kubeControllerManager,
        logFile: join(dirs.logs, "kube-controller-manager.log"),
        detached: options.detached,
        args: [
          `--kubeconfig=${kubeconfig}`,
          // Namespace deletion and ownerReference GC must really happen; service accounts give each
          // namespace its "default" like a real cluster; Deployments report status (observedGeneration,
          // replicas) as kstatus and depends-on read it. There is no scheduler or kubelet: pods stay
          // Pending, so a Deployment with replicas is never available and one scaled to 0 is. The
          // aggregation controller fills admin/edit/view, which admins bind RepoSync reconcilers to.
          `--controllers=${[
            "namespace-controller",
            "garbage-collector-controller",
            "serviceaccount-controller",
            "deployment-controller",
            "replicaset-controller",
            "clusterrole-aggregation-controller",
            // Type-checks admission policies (status.typeChecking), which installAdmissionPolicies waits for.
            "validatingadmissionpolicy-status-controller",
            ...forNode.controllers,
          ].join(",")}`,
          ...forNode.args,
          "--use-service-account-credentials=false",
          "--leader-elect=false",
          "--secure-port=0",
          "--v=0",
        ],
      }),
    );

    // Until aggregated, `edit` grants nothing: a binding to it made right after start would be refused.
    await waitFor("the aggregated edit ClusterRole", started[started.length - 1]!, 30_000, async () => {
      const res = await apiRequest({
        ...conn,
        method: "GET",
        path: "/apis/rbac.authorization.k8s.io/v1/clusterroles/edit",
        timeoutMs: 2_000,
      });
      return res.status === 200 && ((JSON.parse(res.body) as { rules?: unknown[] }).rules ?? []).length > 0;
    });

    // Enforced by the apiserver alone; installed after the controller manager, which type-checks them.
    for (const file of options.admissionPolicyFiles ?? []) await installAdmissionPolicies(conn, file);

    const node =
      nodePrep === undefined
        ? undefined
        : await startNode({
            prep: nodePrep,
            server,
            ca,
            identities,
            logsDir: dirs.logs,
            detached: options.detached,
          });
    if (node !== undefined) started.push(...node.processes);

    const state: ClusterState = {
      server,
      caFile,
      kubeconfig,
      userKubeconfig,
      identities,
      etcdUrl,
      processes: started,
      binDir: binaries.dir,
      startedAt: new Date().toISOString(),
      ...(node !== undefined && { node }),
    };
    await writeFile(join(options.stateDir, stateFileName), JSON.stringify(state, null, 2) + "\n", { mode: 0o600 });
    return state;
  } catch (error) {
    await stopAll(started);
    if (nodePrep !== undefined) {
      await deleteBridge(nodePrep.hostSettings);
      await releaseNodeSlot(options.stateDir);
    }
    throw error;
  }
}

/**
 * Stops every process recorded in stateDir (the node first, then the controller manager, etcd last),
 * removes what the node left on the host, and forgets the state.
 */
export async function down(
  stateDir: string,
  options: {
    /** False keeps the machine's node slot, so a test can check the host is clean before another node starts. */
    readonly releaseNodeSlot?: boolean;
  } = {},
): Promise<readonly ProcessRecord[]> {
  const state = await readState(stateDir);
  if (state === undefined) return [];
  // The node first: its clean-up needs containerd running, and it stops its own processes in order.
  let nodeError: unknown;
  if (state.node !== undefined) {
    try {
      await stopNode(state.node);
    } catch (error) {
      nodeError = error;
    }
    if (options.releaseNodeSlot !== false) await releaseNodeSlot(stateDir);
  }
  await stopAll(state.processes);
  if (nodeError !== undefined) throw nodeError;
  await rm(join(stateDir, stateFileName), { force: true });
  return state.processes;
}

async function stopAll(processes: readonly ProcessRecord[]): Promise<void> {
  for (const p of [...processes].reverse()) await stopProcess(p.pid);
}

async function distinctPorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freeLoopbackPort());
  return [...ports];
}

/** Polls `check` until it is true; fails fast, with the tail of its log, if the process dies meanwhile. */
async function waitFor(
  what: string,
  proc: ProcessRecord,
  timeoutMs: number,
  check: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!isAlive(proc.pid)) {
      throw new Error(`local-cluster: ${proc.name} exited while waiting for ${what}: ${await tailLog(proc.logFile)}`);
    }
    try {
      if (await check()) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      throw new Error(
        `local-cluster: ${what} not ready after ${timeoutMs} ms (log: ${proc.logFile}): ${await tailLog(proc.logFile)}`,
      );
    }
    await delay(100);
  }
}
