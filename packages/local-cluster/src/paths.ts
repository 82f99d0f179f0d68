import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The package's own folder (holds scripts/, go/ and versions/). */
export const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The repository root: the nearest folder above this package that holds the workspace package.json and manifests/. */
export function findRepoRoot(start: string = packageRoot): string {
  let dir = start;
  for (;;) {
    if (
      existsSync(join(dir, "manifests")) &&
      existsSync(join(dir, "package.json")) &&
      existsSync(join(dir, "packages"))
    ) {
      return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`local-cluster: cannot find the driftless repository root above ${start}`);
    dir = parent;
  }
}

/** Where `cluster:up` keeps its state, logs and kubeconfig. */
export function defaultStateDir(repoRoot: string = findRepoRoot()): string {
  return join(repoRoot, ".local", "cluster");
}

export function defaultCrdDir(repoRoot: string = findRepoRoot()): string {
  return join(repoRoot, "manifests", "crds");
}

/** manifests/'s admission policies: what a reconciler may change on its own sync. */
export function defaultAdmissionPolicyFiles(repoRoot: string = findRepoRoot()): string[] {
  return [join(repoRoot, "manifests", "reconciler-admission-policy.yaml")];
}

/**
 * The node's runtime folder. There is one node per machine (kube-proxy's KUBE-* chains, the bridge and
 * the kubelet's port are host-wide), so its containerd socket has a fixed, short address that image
 * builders can find without reading a cluster's state.
 */
export const nodeRuntimeDir = "/run/driftless-node";
/** The node's containerd socket (CRI and `ctr --address`). */
export const nodeContainerdSocket = `${nodeRuntimeDir}/containerd.sock`;
/** The containerd namespace the kubelet's images and containers live in. */
export const nodeContainerdNamespace = "k8s.io";

/** Where a cluster keeps its node's state: kubelet and containerd roots, certificates, CNI config, images. */
export function nodeStateDir(stateDir: string): string {
  return join(stateDir, "node");
}
