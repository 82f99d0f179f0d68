/**
 * This host's processes as /proc shows them, for what a reconciler's state folder may still hold: a
 * reconciler and every tool it runs (git, ssh, helm, kustomize) carry its private TMPDIR or a folder inside
 * it. Off Linux, or for another user's processes (an unreadable environment), nothing is found.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface ProcessStat {
  readonly pid: number;
  readonly ppid: number;
  readonly pgrp: number;
  /** Clock ticks since boot: a pid reused later names a run with another start time. */
  readonly startTicks: number;
  /** Z (zombie) and X: exited, only not reaped yet (a frozen parent reaps nothing). */
  readonly exited: boolean;
}

export function processIds(proc = "/proc"): number[] {
  try {
    return readdirSync(proc)
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return [];
  }
}

/** From /proc/<pid>/stat; the command name before the fields may hold spaces and parentheses. */
export function processStat(pid: number, proc = "/proc"): ProcessStat | undefined {
  try {
    const stat = readFileSync(join(proc, String(pid), "stat"), "latin1");
    // Fields from the 3rd (state) on: ppid the 4th, pgrp the 5th, starttime the 22nd.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const [state, ppid, pgrp] = fields;
    const startTicks = Number(fields[19]);
    if (!Number.isFinite(startTicks)) return undefined;
    return { pid, ppid: Number(ppid), pgrp: Number(pgrp), startTicks, exited: state === "Z" || state === "X" };
  } catch {
    return undefined;
  }
}

export function processEnvironment(pid: number, proc = "/proc"): string[] {
  try {
    return readFileSync(join(proc, String(pid), "environ"), "latin1").split("\0");
  } catch {
    return []; // Gone, or another user's.
  }
}

/** Whether the TMPDIR in `environment` is `tmpDir` or a folder inside it. */
export function tmpDirIsUnder(environment: readonly string[], tmpDir: string): boolean {
  const value = environment.find((entry) => entry.startsWith("TMPDIR="))?.slice("TMPDIR=".length);
  return value !== undefined && (value === tmpDir || value.startsWith(`${tmpDir}/`));
}
