import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { nodeContainerdNamespace, nodeContainerdSocket, nodeRuntimeDir } from "../paths.ts";
import { mustRun, runCommand } from "./command.ts";

/** Where the node's containerd keeps images and snapshots (per cluster) and its runtime state (per machine). */
export interface ContainerdDirs {
  readonly root: string;
  readonly state: string;
  readonly config: string;
  readonly cniConfDir: string;
}

export function containerdDirs(nodeDir: string): ContainerdDirs {
  return {
    root: join(nodeDir, "containerd"),
    state: join(nodeRuntimeDir, "containerd"),
    config: join(nodeDir, "containerd.toml"),
    cniConfDir: join(nodeDir, "cni", "net.d"),
  };
}

/** containerd's configuration: its own socket and folders, the CRI plugin on runc with cgroupfs, our sandbox image. */
export async function writeContainerdConfig(dirs: ContainerdDirs, sandboxImage: string): Promise<void> {
  await mkdir(dirs.root, { recursive: true });
  await mkdir(nodeRuntimeDir, { recursive: true });
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  const toml = `version = 2
root = ${JSON.stringify(dirs.root)}
state = ${JSON.stringify(dirs.state)}
# Plugins that would write outside our folders or that a node here has no use for.
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = ${JSON.stringify(nodeContainerdSocket)}

[${cri}]
  sandbox_image = ${JSON.stringify(sandboxImage)}
  enable_selinux = false
  # This machine withholds CAP_SYS_RESOURCE even from root, so no process may lower its OOM score
  # below containerd's own: runc would fail every sandbox (-998) and Guaranteed pod (-997).
  restrict_oom_score_adj = true
  [${cri}.containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [${cri}.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [${cri}.containerd.runtimes.runc.options]
        SystemdCgroup = false
  [${cri}.cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = ${JSON.stringify(dirs.cniConfDir)}
`;
  await writeFile(dirs.config, toml);
}

/** `ctr` against the node's containerd, in the kubelet's namespace. */
export function ctr(args: readonly string[]): Promise<string> {
  return mustRun("ctr", ["--address", nodeContainerdSocket, "--namespace", nodeContainerdNamespace, ...args]);
}

/** True when the node's containerd answers. */
export async function containerdAnswers(): Promise<boolean> {
  if (!existsSync(nodeContainerdSocket)) return false;
  return (await runCommand("ctr", ["--address", nodeContainerdSocket, "version"])).code === 0;
}

/**
 * Imports an image archive (OCI layout or `docker save` format) into the node's containerd, where the
 * kubelet finds it: pods then use it by name with imagePullPolicy Never (or IfNotPresent), and
 * nothing is pulled. Returns the names of the images imported.
 */
export async function importImage(archive: string): Promise<string[]> {
  if (!existsSync(archive)) throw new Error(`local-cluster: no image archive at ${archive}`);
  if (!(await containerdAnswers())) {
    throw new Error(
      `local-cluster: the node's containerd does not answer at ${nodeContainerdSocket}; start it with \`npm run cluster:up -- --with-node\``,
    );
  }
  const out = await ctr(["images", "import", "--all-platforms", archive]);
  // ctr prints "unpacking <name> (sha256:...)...done" per image.
  return [...out.matchAll(/unpacking (\S+) \(sha256:/g)].map((m) => m[1]!);
}

/**
 * Kills and deletes every task and container of the kubelet's namespace, and returns the network
 * namespaces their sandboxes held (the CNI teardown that the kubelet would have done is left to
 * the caller: deleting the bridge and these namespaces).
 */
export async function removeAllContainers(): Promise<string[]> {
  const netns = new Set<string>();
  const ids = (await ctr(["containers", "list", "--quiet"])).split("\n").filter((id) => id !== "");
  for (const id of ids) {
    const info = JSON.parse(await ctr(["containers", "info", id])) as {
      Spec?: { linux?: { namespaces?: { type: string; path?: string }[] } };
    };
    for (const ns of info.Spec?.linux?.namespaces ?? []) {
      // Sandboxes hold a named namespace; their containers join it through /proc/<pid>/ns/net.
      if (ns.type === "network" && ns.path !== undefined && /^\/(var\/)?run\/netns\//.test(ns.path)) netns.add(ns.path);
    }
    await runCommand("ctr", [
      "--address",
      nodeContainerdSocket,
      "-n",
      nodeContainerdNamespace,
      "tasks",
      "kill",
      "--signal",
      "SIGKILL",
      id,
    ]);
    await runCommand("ctr", [
      "--address",
      nodeContainerdSocket,
      "-n",
      nodeContainerdNamespace,
      "tasks",
      "delete",
      "--force",
      id,
    ]);
    await runCommand("ctr", [
      "--address",
      nodeContainerdSocket,
      "-n",
      nodeContainerdNamespace,
      "containers",
      "delete",
      id,
    ]);
  }
  return [...netns];
}

/** The containers left in the kubelet's namespace (for `down`'s check and tests). */
export async function listContainers(): Promise<string[]> {
  if (!(await containerdAnswers())) return [];
  return (await ctr(["containers", "list", "--quiet"])).split("\n").filter((id) => id !== "");
}
