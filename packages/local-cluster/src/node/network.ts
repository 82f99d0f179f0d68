import { existsSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { mustRun, runCommand } from "./command.ts";

/**
 * The node's network: a bridge the project creates, pods on it through the CNI bridge plugin, and
 * Services through kube-proxy's iptables rules. Nothing leaves the machine: the bridge has no uplink.
 */
export const nodeNetwork = {
  nodeName: "driftless-node",
  bridge: "driftless0",
  /** The bridge's address: the pods' gateway, the node's InternalIP and the apiserver's advertised address. */
  bridgeAddress: "10.88.0.1",
  podCidr: "10.88.0.0/16",
  /** Must match kube-apiserver's --service-cluster-ip-range; the `kubernetes` Service is its first address. */
  serviceCidr: "10.0.0.0/24",
  kubernetesServiceIp: "10.0.0.1",
} as const;

/** Host settings the node changes, with the values they had before, so that `down` can put them back. */
export interface HostSettings {
  readonly ipForward: string;
}

const ipForwardFile = "/proc/sys/net/ipv4/ip_forward";

/** Creates the bridge with the gateway address, and lets the host route between pods and Services. */
export async function createBridge(): Promise<HostSettings> {
  const { bridge, bridgeAddress, podCidr } = nodeNetwork;
  if ((await runCommand("ip", ["link", "show", bridge])).code !== 0) {
    await mustRun("ip", ["link", "add", bridge, "type", "bridge"]);
  }
  const prefix = podCidr.split("/")[1]!;
  const addresses = await mustRun("ip", ["-o", "-4", "addr", "show", "dev", bridge]);
  if (!addresses.includes(` ${bridgeAddress}/${prefix} `)) {
    await mustRun("ip", ["addr", "add", `${bridgeAddress}/${prefix}`, "dev", bridge]);
  }
  await mustRun("ip", ["link", "set", bridge, "up"]);
  const ipForward = (await readFile(ipForwardFile, "utf8")).trim();
  // A Service address rewritten to a pod on the same bridge is routed back out through it.
  await writeFile(ipForwardFile, "1\n");
  return { ipForward };
}

/** The CNI configuration the CRI plugin of containerd reads: bridge + host-local IPAM, loopback, portmap. */
export async function writeCniConfig(confDir: string, ipamDataDir: string): Promise<void> {
  const { bridge, bridgeAddress, podCidr } = nodeNetwork;
  await mkdir(confDir, { recursive: true });
  const config = {
    cniVersion: "1.0.0",
    name: "driftless",
    plugins: [
      {
        type: "bridge",
        bridge,
        isGateway: true,
        // Pods only talk to the host and to each other; no masquerading, no uplink.
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: "host-local",
          dataDir: ipamDataDir,
          ranges: [[{ subnet: podCidr, gateway: bridgeAddress }]],
          routes: [{ dst: "0.0.0.0/0" }],
        },
      },
      { type: "portmap", capabilities: { portMappings: true } },
    ],
  };
  await writeFile(join(confDir, "10-driftless.conflist"), JSON.stringify(config, null, 2) + "\n");
}

/** Deletes the bridge (and with it the host ends of pod veths) and restores the host settings. */
export async function deleteBridge(settings: HostSettings | undefined): Promise<void> {
  if ((await runCommand("ip", ["link", "show", nodeNetwork.bridge])).code === 0) {
    await mustRun("ip", ["link", "del", nodeNetwork.bridge]);
  }
  if (settings !== undefined) await writeFile(ipForwardFile, `${settings.ipForward}\n`);
}

/** Removes network namespaces left by pod sandboxes (unmounting their bind mounts first). */
export async function deleteNetns(paths: readonly string[]): Promise<void> {
  for (const path of paths) {
    if (!existsSync(path)) continue;
    await runCommand("umount", ["-l", path]);
    await rm(path, { force: true });
  }
}

const chainPrefixes = ["KUBE-", "CNI-"];

/**
 * Removes every iptables chain the node's components added (kube-proxy's and the kubelet's KUBE-*,
 * the CNI plugins' CNI-*), with the jumps to them from the built-in chains, in IPv4 and IPv6.
 */
export async function deleteNodeChains(): Promise<void> {
  for (const tool of ["iptables", "ip6tables"]) {
    const dump = await runCommand(`${tool}-save`, []);
    if (dump.code !== 0) continue;
    let table = "";
    const ours = new Map<string, string[]>();
    const jumps: { table: string; rule: string }[] = [];
    for (const line of dump.stdout.split("\n")) {
      if (line.startsWith("*")) {
        table = line.slice(1);
        ours.set(table, []);
      } else if (line.startsWith(":")) {
        const chain = line.slice(1).split(" ")[0]!;
        if (chainPrefixes.some((p) => chain.startsWith(p))) ours.get(table)!.push(chain);
      } else if (line.startsWith("-A ")) {
        const chain = line.split(" ")[1]!;
        const target = / -j (\S+)/.exec(line)?.[1] ?? "";
        const inOurs = chainPrefixes.some((p) => chain.startsWith(p));
        if (!inOurs && chainPrefixes.some((p) => target.startsWith(p))) jumps.push({ table, rule: line.slice(3) });
      }
    }
    for (const { table: t, rule } of jumps) {
      await runCommand(tool, ["-t", t, "-D", ...splitRule(rule)]);
    }
    for (const [t, chains] of ours) {
      for (const chain of chains) await runCommand(tool, ["-t", t, "-F", chain]);
      for (const chain of chains) await runCommand(tool, ["-t", t, "-X", chain]);
    }
  }
}

/** Splits an iptables-save rule into arguments, keeping quoted comments whole. */
function splitRule(rule: string): string[] {
  const args: string[] = [];
  const pattern = /"((?:[^"\\]|\\.)*)"|(\S+)/g;
  for (const match of rule.matchAll(pattern)) args.push(match[1] !== undefined ? match[1] : match[2]!);
  return args;
}

/** The node's iptables chains still present (for `down`'s own check and for tests). */
export async function listNodeChains(): Promise<string[]> {
  const found: string[] = [];
  for (const tool of ["iptables", "ip6tables"]) {
    const dump = await runCommand(`${tool}-save`, []);
    for (const line of dump.stdout.split("\n")) {
      if (!line.startsWith(":")) continue;
      const chain = line.slice(1).split(" ")[0]!;
      if (chainPrefixes.some((p) => chain.startsWith(p))) found.push(`${tool} ${chain}`);
    }
  }
  return found;
}
