import { existsSync } from "node:fs";
import { mkdir, readFile, readdir, realpath, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { ensureNodeBinaries, type NodeBinaries } from "../binaries.ts";
import { apiRequest } from "../http.ts";
import type { Identities } from "../identities.ts";
import { renderKubeconfig } from "../kubeconfig.ts";
import { tailLog } from "../logs.ts";
import { nodeContainerdNamespace, nodeContainerdSocket, nodeRuntimeDir, nodeStateDir } from "../paths.ts";
import { isAlive, startProcess, stopProcess, type ProcessRecord } from "../processes.ts";
import { makeNodeCerts, type NodeCerts } from "./certs.ts";
import { runCommand } from "./command.ts";
import { writeKubeletConfig, writeKubeProxyConfig } from "./components.ts";
import {
  containerdAnswers,
  containerdDirs,
  importImage,
  removeAllContainers,
  writeContainerdConfig,
} from "./containerd.ts";
import {
  createBridge,
  deleteBridge,
  deleteNetns,
  deleteNodeChains,
  nodeNetwork,
  writeCniConfig,
  type HostSettings,
} from "./network.ts";
import { pauseImageName, writePauseImage } from "./oci-image.ts";
import { mountsUnder, unmountUnder } from "./mounts.ts";
import { claimNodeSlot, slotOwnerFileName } from "./slot.ts";
import { removePodCgroups } from "./cgroups.ts";
export { releaseNodeSlot } from "./slot.ts";

/** A running node, as recorded in the cluster's state.json. */
export interface NodeState {
  readonly name: string;
  readonly dir: string;
  readonly containerdSocket: string;
  readonly containerdNamespace: string;
  readonly bridge: string;
  readonly podCidr: string;
  readonly hostSettings: HostSettings;
  /** containerd, kubelet, kube-proxy, kube-scheduler, in start order. */
  readonly processes: readonly ProcessRecord[];
  readonly binDir: string;
}

/** What the control plane must be started with for a node to join it, made before it starts. */
export interface NodePreparation {
  readonly dir: string;
  readonly binaries: NodeBinaries;
  readonly certs: NodeCerts;
  readonly hostSettings: HostSettings;
}

const hostPrerequisites = [
  "containerd",
  "containerd-shim-runc-v2",
  "runc",
  "ctr",
  "iptables",
  "iptables-save",
  "ip",
  "openssl",
  "tar",
];
const cniPlugins = ["bridge", "host-local", "loopback", "portmap"];

/**
 * Checks the host, claims the machine's one node slot for this cluster, builds the node's binaries
 * and makes the bridge and certificates the apiserver is started with.
 */
export async function prepareNode(
  stateDir: string,
  options: { readonly quiet?: boolean; readonly waitForSlotMs?: number },
): Promise<NodePreparation> {
  await checkHost();
  await claimNodeSlot(stateDir, options.waitForSlotMs ?? 0, {
    nodeOf: readNodeOf,
    cleanUp: stopNode,
  });
  await rm(nodeStateDir(stateDir), { recursive: true, force: true });
  await mkdir(nodeStateDir(stateDir), { recursive: true });
  // Resolved, as the kubelet and the mount table name it: `down` finds its mounts by this path.
  const dir = await realpath(nodeStateDir(stateDir));
  const binaries = await ensureNodeBinaries(options);
  const hostSettings = await createBridge();
  const certs = await makeNodeCerts(
    join(dir, "certs"),
    nodeNetwork.nodeName,
    nodeNetwork.bridgeAddress,
    nodeNetwork.kubernetesServiceIp,
  );
  return { dir, binaries, certs, hostSettings };
}

/** The apiserver flags a node needs: reachable from pods at the bridge address, ServiceAccount tokens, Node authorizer. */
export function apiserverNodeArgs(prep: NodePreparation): string[] {
  return [
    // Pods reach the apiserver through the `kubernetes` Service, whose endpoint may not be a loopback address.
    "--bind-address=0.0.0.0",
    `--advertise-address=${nodeNetwork.bridgeAddress}`,
    "--authorization-mode=Node,RBAC",
    "--enable-admission-plugins=NodeRestriction",
    `--kubelet-client-certificate=${prep.certs.apiserverClientCertFile}`,
    `--kubelet-client-key=${prep.certs.apiserverClientKeyFile}`,
    `--kubelet-certificate-authority=${prep.certs.caFile}`,
    "--kubelet-preferred-address-types=InternalIP",
    `--tls-cert-file=${prep.certs.apiserverCertFile}`,
    `--tls-private-key-file=${prep.certs.apiserverKeyFile}`,
  ];
}

/** Controllers a cluster with pods needs on top of the ones the control plane always runs. */
export function controllerManagerNodeArgs(caFile: string): { controllers: string[]; args: string[] } {
  return {
    controllers: [
      // Lifts the not-ready taint a kubelet registers with, once the node reports Ready.
      "node-lifecycle-controller",
      "endpoints-controller",
      "endpointslice-controller",
      "endpointslice-mirroring-controller",
      "root-ca-certificate-publisher-controller",
      "pod-garbage-collector-controller",
      "statefulset-controller",
      "daemonset-controller",
      "job-controller",
    ],
    // Published in every namespace as kube-root-ca.crt, which each ServiceAccount token volume mounts.
    args: [`--root-ca-file=${caFile}`],
  };
}

export interface StartNodeOptions {
  readonly prep: NodePreparation;
  readonly server: string;
  readonly ca: string;
  readonly identities: Identities;
  readonly logsDir: string;
  readonly detached: boolean;
  readonly readyTimeoutMs?: number;
}

/** Starts containerd (with the pause image), the kubelet, kube-proxy and kube-scheduler, and waits for the node to be Ready. */
export async function startNode(options: StartNodeOptions): Promise<NodeState> {
  const { prep, identities } = options;
  if (identities.node === undefined)
    throw new Error("local-cluster: the control plane was started without node identities");
  const started: ProcessRecord[] = [];
  const dir = prep.dir;
  try {
    const kubeconfigFor = async (name: string, identity: typeof identities.admin): Promise<string> => {
      const file = join(dir, `${name}.kubeconfig`);
      await writeFile(
        file,
        renderKubeconfig({ server: options.server, caData: options.ca, identity, contextName: name }),
        { mode: 0o600 },
      );
      return file;
    };
    const ctrDirs = containerdDirs(dir);
    await writeCniConfig(ctrDirs.cniConfDir, join(dir, "cni", "ipam"));
    await writeContainerdConfig(ctrDirs, pauseImageName);
    const containerd = await startProcess({
      name: "containerd",
      binary: "containerd",
      args: ["--config", ctrDirs.config, "--log-level", "warn"],
      logFile: join(options.logsDir, "containerd.log"),
      detached: options.detached,
    });
    started.push(containerd);
    await waitFor("containerd", containerd, 30_000, containerdAnswers);
    const pauseArchive = join(dir, "images", "pause.tar");
    await writePauseImage(prep.binaries.pause, pauseArchive);
    await importImage(pauseArchive);

    const resolvConf = join(dir, "resolv.conf");
    // No cluster DNS runs here. An empty file would make containerd copy the machine's resolv.conf into
    // pods, whose lookups would then leave the machine; 127.0.0.1 makes them fail inside the pod.
    await writeFile(resolvConf, "nameserver 127.0.0.1\n");
    const kubeletConfig = join(dir, "kubelet.yaml");
    await writeKubeletConfig(kubeletConfig, prep.certs, resolvConf);
    started.push(
      await startProcess({
        name: "kubelet",
        binary: prep.binaries.kubelet,
        args: [
          `--config=${kubeletConfig}`,
          `--kubeconfig=${await kubeconfigFor("kubelet", identities.node.kubelet)}`,
          `--hostname-override=${nodeNetwork.nodeName}`,
          `--node-ip=${nodeNetwork.bridgeAddress}`,
          `--root-dir=${join(dir, "kubelet")}`,
          `--cert-dir=${join(dir, "kubelet", "pki")}`,
          "--v=1",
        ],
        logFile: join(options.logsDir, "kubelet.log"),
        detached: options.detached,
      }),
    );
    const proxyConfig = join(dir, "kube-proxy.yaml");
    await writeKubeProxyConfig(proxyConfig, await kubeconfigFor("kube-proxy", identities.node.kubeProxy));
    started.push(
      await startProcess({
        name: "kube-proxy",
        binary: prep.binaries.kubeProxy,
        args: [`--config=${proxyConfig}`, "--v=1"],
        logFile: join(options.logsDir, "kube-proxy.log"),
        detached: options.detached,
      }),
    );
    started.push(
      await startProcess({
        name: "kube-scheduler",
        binary: prep.binaries.kubeScheduler,
        args: [
          `--kubeconfig=${await kubeconfigFor("kube-scheduler", identities.node.kubeScheduler)}`,
          "--leader-elect=false",
          "--secure-port=0",
          "--v=0",
        ],
        logFile: join(options.logsDir, "kube-scheduler.log"),
        detached: options.detached,
      }),
    );
    const kubelet = started.find((p) => p.name === "kubelet")!;
    await waitFor("the node to be Ready", kubelet, options.readyTimeoutMs ?? 120_000, async () => {
      for (const p of started) {
        if (!isAlive(p.pid)) throw new NodeProcessExited(p, await tailLog(p.logFile));
      }
      return isNodeReady(options.server, options.ca, identities.admin.token);
    });
    return {
      name: nodeNetwork.nodeName,
      dir,
      containerdSocket: nodeContainerdSocket,
      containerdNamespace: nodeContainerdNamespace,
      bridge: nodeNetwork.bridge,
      podCidr: nodeNetwork.podCidr,
      hostSettings: prep.hostSettings,
      processes: started,
      binDir: prep.binaries.dir,
    };
  } catch (error) {
    await stopNode({ processes: started, hostSettings: prep.hostSettings, dir, binDir: prep.binaries.dir });
    throw error;
  }
}

class NodeProcessExited extends Error {
  constructor(proc: ProcessRecord, tail: string) {
    super(`local-cluster: ${proc.name} exited while the node was starting: ${tail}`);
  }
}

async function isNodeReady(server: string, ca: string, token: string): Promise<boolean> {
  const res = await apiRequest({
    server,
    ca,
    token,
    method: "GET",
    path: `/api/v1/nodes/${nodeNetwork.nodeName}`,
    timeoutMs: 3_000,
  });
  if (res.status !== 200) return false;
  const node = JSON.parse(res.body) as {
    spec?: { taints?: { key: string }[] };
    status?: { conditions?: { type: string; status: string }[] };
  };
  const ready = (node.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");
  // Pods are scheduled only once the node lifecycle controller has lifted the taint.
  return ready && !(node.spec?.taints ?? []).some((t) => t.key === "node.kubernetes.io/not-ready");
}

/**
 * Stops the node and removes every trace of it from the host: the node's processes, every container
 * and pod sandbox (killed through containerd, since the kubelet is already gone), their network
 * namespaces, the mounts under the node's folders, the iptables chains, the bridge, and the host
 * settings it changed. Safe to call on a half-started or already stopped node.
 */
export async function stopNode(node: Pick<NodeState, "processes" | "hostSettings" | "dir" | "binDir">): Promise<void> {
  // Every step runs even if one before it failed: a half-cleaned host is worse than an error.
  const failures: string[] = [];
  const step = async (what: string, action: () => Promise<unknown>): Promise<void> => {
    try {
      await action();
    } catch (error) {
      failures.push(`${what}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  const byName = new Map(node.processes.map((p) => [p.name, p]));
  // The kubelet would restart what we kill; kube-proxy would re-add what we delete.
  for (const name of ["kube-scheduler", "kube-proxy", "kubelet"]) {
    const p = byName.get(name);
    if (p !== undefined) await step(`stopping ${name}`, () => stopProcess(p.pid));
  }
  let netns: string[] = [];
  await step("removing containers", async () => {
    if (await containerdAnswers()) netns = await removeAllContainers();
  });
  const containerd = byName.get("containerd");
  if (containerd !== undefined) await step("stopping containerd", () => stopProcess(containerd.pid));
  await step("removing network namespaces", () => deleteNetns(netns));
  await step("unmounting", () => unmountUnder([node.dir, nodeRuntimeDir]));
  await step("removing pod cgroups", () => removePodCgroups());
  const kubeProxy = join(node.binDir, "kube-proxy");
  if (existsSync(kubeProxy)) await step("kube-proxy --cleanup", () => runCommand(kubeProxy, ["--cleanup", "--v=0"]));
  await step("deleting iptables chains", () => deleteNodeChains());
  await step("deleting the bridge", () => deleteBridge(node.hostSettings));
  // All but the slot's owner file: the slot is released by the caller, when it is done with the host.
  await step("removing the runtime folder", () => removeRuntimeFiles());
  // Only once nothing is mounted under it: images, snapshots and volumes go with the node.
  await step("removing the node folder", async () => {
    if ((await mountsUnder([node.dir])).length === 0) await rm(node.dir, { recursive: true, force: true });
  });
  if (failures.length > 0) throw new Error(`local-cluster: stopping the node: ${failures.join("; ")}`);
}

async function checkHost(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error("local-cluster: a node needs root (containers, the bridge, iptables)");
  const missing: string[] = [];
  for (const command of hostPrerequisites) {
    if ((await runCommand("sh", ["-c", `command -v ${command}`])).code !== 0) missing.push(command);
  }
  for (const plugin of cniPlugins)
    if (!existsSync(join("/usr/lib/cni", plugin))) missing.push(`/usr/lib/cni/${plugin}`);
  if (missing.length > 0) {
    throw new Error(
      `local-cluster: a node needs ${missing.join(", ")}: install the Debian packages containerd runc containernetworking-plugins iptables (\`bash scripts/node/setup.sh\`)`,
    );
  }
}

async function waitFor(
  what: string,
  proc: ProcessRecord,
  timeoutMs: number,
  check: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!isAlive(proc.pid))
      throw new Error(`local-cluster: ${proc.name} exited while waiting for ${what}: ${await tailLog(proc.logFile)}`);
    try {
      if (await check()) return;
    } catch (error) {
      if (error instanceof NodeProcessExited) throw error;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `local-cluster: ${what}: not after ${timeoutMs} ms (log: ${proc.logFile}): ${await tailLog(proc.logFile)}`,
      );
    }
    await delay(200);
  }
}

async function readNodeOf(stateDir: string): Promise<NodeState | undefined> {
  const file = join(stateDir, "state.json");
  if (!existsSync(file)) return undefined;
  return (JSON.parse(await readFile(file, "utf8")) as { node?: NodeState }).node;
}

async function removeRuntimeFiles(): Promise<void> {
  if (!existsSync(nodeRuntimeDir)) return;
  for (const entry of await readdir(nodeRuntimeDir)) {
    if (entry !== slotOwnerFileName) await rm(join(nodeRuntimeDir, entry), { recursive: true, force: true });
  }
}
