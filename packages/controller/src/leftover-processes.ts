/**
 * What a killed child leaves running. A reconciler runs git, ssh, helm and kustomize in process groups of
 * their own (so a timeout can kill each tool with its helpers), which a SIGKILL of the reconciler does not
 * reach: a fetch stalled on a silent server would live on, holding the cache's locks that the next child
 * then finds. Every one of them inherits the child's private TMPDIR (or a folder inside it), which marks them.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * SIGKILLs every process whose TMPDIR is `tmpDir` or a folder inside it, except this process; returns
 * their pids. Reads /proc: elsewhere (or for another user's processes, whose environment is unreadable)
 * nothing is found. Synchronous, so it is over before a restart can start a child with the same TMPDIR.
 */
export function killProcessesIn(tmpDir: string, proc = "/proc"): number[] {
  let entries: string[];
  try {
    entries = readdirSync(proc);
  } catch {
    return [];
  }
  const killed: number[] = [];
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) continue;
    if (!tmpDirIsUnder(environmentOf(proc, entry), tmpDir)) continue;
    try {
      process.kill(pid, "SIGKILL");
      killed.push(pid);
    } catch {
      // Gone meanwhile, or not ours to signal.
    }
  }
  return killed;
}

function environmentOf(proc: string, pid: string): string[] {
  try {
    return readFileSync(join(proc, pid, "environ"), "latin1").split("\0");
  } catch {
    return [];
  }
}

function tmpDirIsUnder(environment: readonly string[], tmpDir: string): boolean {
  const value = environment.find((entry) => entry.startsWith("TMPDIR="))?.slice("TMPDIR=".length);
  return value !== undefined && (value === tmpDir || value.startsWith(`${tmpDir}/`));
}
