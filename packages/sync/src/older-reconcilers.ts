/**
 * Two reconcilers of one sync may share a state folder for a while: in process mode, a deposed or frozen
 * leader's child runs on (until its heartbeat deadline and its stop) beside the new leader's child of the same
 * sync. What the running one holds (its render folders in the private TMPDIR, its git's locks and half-written
 * packs in the cache) looks exactly like what a killed one left, so the newer one waits for every older
 * process of its TMPDIR to exit before it sweeps or fetches; what a dead one left is then removed as before.
 *
 * Found in /proc: a process whose TMPDIR is this one's or a folder inside it (the older reconciler, and the
 * git, helm or kustomize it runs, which may outlive it: a child that misses its heartbeat exits without
 * waiting for its tools), started before this one: by start time (clock ticks since boot), then pid, an order
 * both sides see alike, so of two starting at once exactly one goes first, and a reused pid is a new start.
 * In a pod nothing else has the container's TMPDIR; without /proc (not Linux) nothing is found.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "./log.ts";
import { processEnvironment, processIds, processStat, tmpDirIsUnder } from "./process-table.ts";
import { tmpdirIsPrivate } from "./stale-temp.ts";

/** One run of a process: a pid, reused later, names another run with another start time. */
export interface ProcessRun {
  readonly pid: number;
  readonly startTicks: number;
}

const pollMs = 200;
const stillWaitingLogMs = 30_000;
/**
 * An older child stops within its 10 s heartbeat deadline and its stop's grace; one that has not gone by then
 * is frozen (SIGSTOP, a frozen cgroup) and writes nothing while it stays so, and the sync must not wait on it
 * for ever.
 */
export const maxOlderReconcilerWaitMs = 60_000;

export interface OlderReconcilerWaitOptions {
  readonly proc?: string;
  readonly maxWaitMs?: number;
}

/**
 * Resolves once no process of `env`'s private TMPDIR that started before this one runs, when `signal` aborts
 * (a stop asked meanwhile), or after `maxWaitMs`. Waits for nothing unless the TMPDIR is marked private.
 */
export async function waitForOlderReconcilers(
  env: Readonly<Record<string, string | undefined>>,
  log: Logger,
  signal: AbortSignal,
  { proc = "/proc", maxWaitMs = maxOlderReconcilerWaitMs }: OlderReconcilerWaitOptions = {},
): Promise<void> {
  const tmpDir = env["TMPDIR"];
  if (!tmpdirIsPrivate(env) || tmpDir === undefined || tmpDir === "") return;
  let older = olderProcessesIn(tmpDir, process.pid, proc);
  if (older.length === 0) return;
  const started = Date.now();
  let nextLog = started + stillWaitingLogMs;
  log.info("an older reconciler runs on this state folder (a previous leader's): waiting for it to exit", {
    tmpDir,
    pids: older.map((run) => run.pid),
  });
  while (older.length > 0 && !signal.aborted) {
    if (Date.now() - started >= maxWaitMs) {
      log.warn("an older reconciler of this state folder outlived the wait (frozen?): starting beside it", {
        pids: older.map((run) => run.pid),
        waitedSeconds: Math.round((Date.now() - started) / 1000),
      });
      return;
    }
    await sleep(pollMs, undefined, { signal }).catch(() => undefined);
    older = older.filter((run) => isRunning(proc, run));
    if (older.length > 0 && Date.now() >= nextLog) {
      nextLog += stillWaitingLogMs;
      log.warn("still waiting for an older reconciler of this state folder to exit", {
        pids: older.map((run) => run.pid),
        waitedSeconds: Math.round((Date.now() - started) / 1000),
      });
    }
  }
  if (older.length === 0) log.info("the older reconciler exited", { waitedMs: Date.now() - started });
}

/** The live processes with `tmpDir` or a folder inside it as their TMPDIR that started before `self`. */
export function olderProcessesIn(tmpDir: string, self: number, proc = "/proc"): ProcessRun[] {
  const mine = processStat(self, proc);
  if (mine === undefined) return [];
  const older: ProcessRun[] = [];
  for (const pid of processIds(proc)) {
    if (pid === self) continue;
    const run = processStat(pid, proc);
    if (run === undefined || run.exited || !startedBefore(run, mine)) continue;
    if (!tmpDirIsUnder(processEnvironment(pid, proc), tmpDir)) continue;
    // The environment read is that run's only if the pid was not reused in between.
    if (isRunning(proc, run)) older.push({ pid, startTicks: run.startTicks });
  }
  return older;
}

function startedBefore(a: ProcessRun, b: ProcessRun): boolean {
  return a.startTicks < b.startTicks || (a.startTicks === b.startTicks && a.pid < b.pid);
}

function isRunning(proc: string, run: ProcessRun): boolean {
  const now = processStat(run.pid, proc);
  return now !== undefined && !now.exited && now.startTicks === run.startTicks;
}
