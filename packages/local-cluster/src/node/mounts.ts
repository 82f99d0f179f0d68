import { readFile, realpath } from "node:fs/promises";
import { runCommand } from "./command.ts";

/**
 * Mount points at or under any of the folders, deepest first, from this process's mount table. The
 * table holds resolved paths (the kubelet mounts its root at its real path), so the folders are resolved too.
 */
export async function mountsUnder(given: readonly string[]): Promise<string[]> {
  const folders = [...given];
  for (const folder of given) {
    const real = await realpath(folder).catch(() => folder);
    if (real !== folder) folders.push(real);
  }
  const table = await readFile("/proc/self/mountinfo", "utf8");
  const points = table
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => unescapeMountPath(line.split(" ")[4]!))
    .filter((point) => folders.some((f) => point === f || point.startsWith(`${f}/`)));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

/** Unmounts everything at or under the folders: volumes under the kubelet's root, sandboxes' shm, rootfs overlays. */
export async function unmountUnder(folders: readonly string[]): Promise<void> {
  for (const point of await mountsUnder(folders)) {
    if ((await runCommand("umount", [point])).code !== 0) await runCommand("umount", ["-l", point]);
  }
}

// mountinfo escapes space, tab, newline and backslash as octal.
function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}
