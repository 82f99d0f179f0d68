/**
 * What a killed child leaves running. A reconciler runs git, ssh, helm and kustomize in process groups of
 * their own (so a timeout can kill each tool with its helpers), which a SIGKILL of the reconciler does not
 * reach: a fetch stalled on a silent server would live on, holding the cache's locks that the next child
 * then finds. Every one of them inherits the child's private TMPDIR (or a folder inside it), which marks them.
 */
import { processEnvironment, processIds, processStat, tmpDirIsUnder, type ProcessStat } from "@driftless/sync";

/**
 * SIGKILLs the orphans marked with `tmpDir` (their TMPDIR is it or a folder inside it), each with its
 * process group when it leads one; returns their pids. An orphan is one reparented to this process or its
 * ancestors (init, a subreaper above us), where a dead child's processes go: a live process of the same
 * mark whose parent still runs (another manager's child on a shared state folder, its git) is left alone.
 * Reads /proc: elsewhere (or for another user's processes, whose environment is unreadable) nothing is
 * found. Synchronous, so it is over before a restart can start a child with the same TMPDIR.
 */
export function killProcessesIn(tmpDir: string, proc = "/proc"): number[] {
  const ancestors = ancestorsOf(process.pid, proc);
  const killed: number[] = [];
  for (const entry of processEntries(proc)) {
    if (ancestors.has(entry.pid) || !ancestors.has(entry.ppid)) continue;
    if (!tmpDirIsUnder(processEnvironment(entry.pid, proc), tmpDir)) continue;
    try {
      process.kill(entry.pgrp === entry.pid ? -entry.pid : entry.pid, "SIGKILL");
      killed.push(entry.pid);
    } catch {
      // Gone meanwhile, or not ours to signal.
    }
  }
  return killed;
}

function processEntries(proc: string): ProcessStat[] {
  return processIds(proc).flatMap((pid) => processStat(pid, proc) ?? []);
}

/**
 * Where a dead child's processes are reparented: this process itself (when it is a container's init), its
 * parent, that one's parent, and so on up to init (pid 1, counted even when not visible).
 */
function ancestorsOf(pid: number, proc: string): Set<number> {
  const ancestors = new Set<number>([pid, 1]);
  let current = processStat(pid, proc)?.ppid;
  while (current !== undefined && current > 0 && !ancestors.has(current)) {
    ancestors.add(current);
    current = processStat(current, proc)?.ppid;
  }
  return ancestors;
}
