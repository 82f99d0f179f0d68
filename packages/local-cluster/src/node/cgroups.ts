import { existsSync } from "node:fs";
import { readdir, rmdir } from "node:fs/promises";
import { join } from "node:path";

const cgroupRoot = "/sys/fs/cgroup";
/** The kubelet's cgroup for pods (cgroupfs driver), created in every hierarchy it uses. */
const podsCgroup = "kubepods";

/** The kubelet's pod cgroups that exist, one per hierarchy (cgroup v1 controllers and the unified one). */
export async function podCgroups(): Promise<string[]> {
  if (!existsSync(cgroupRoot)) return [];
  const found: string[] = [];
  for (const hierarchy of await readdir(cgroupRoot)) {
    const dir = join(cgroupRoot, hierarchy, podsCgroup);
    if (existsSync(dir)) found.push(dir);
  }
  return found;
}

/**
 * Removes the pod cgroups the kubelet made, deepest first. Containers are already gone (a cgroup with
 * processes cannot be removed, and is then left and reported by `podCgroups`).
 */
export async function removePodCgroups(): Promise<void> {
  for (const dir of await podCgroups()) await removeTree(dir);
}

async function removeTree(dir: string): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) if (entry.isDirectory()) await removeTree(join(dir, entry.name));
  await rmdir(dir).catch(() => undefined);
}
