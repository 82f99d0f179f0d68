import { spawn } from "node:child_process";
import { openSync, closeSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";

/** A control-plane process we started, as recorded in the state file so `cluster:down` can stop it by pid. */
export interface ProcessRecord {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  readonly command: readonly string[];
}

export interface StartOptions {
  readonly name: string;
  readonly binary: string;
  readonly args: readonly string[];
  readonly logFile: string;
  /**
   * Detached processes outlive the caller (`cluster:up`); attached ones are tied to the caller and
   * are also killed by `killAllOnExit` if the caller exits without tearing down (a test run).
   */
  readonly detached: boolean;
}

const attached = new Set<number>();
let exitHookInstalled = false;

/** Starts a process with stdout and stderr appended to its log file. Rejects if it cannot be spawned. */
export async function startProcess(options: StartOptions): Promise<ProcessRecord> {
  const log = openSync(options.logFile, "a");
  try {
    const child = spawn(options.binary, [...options.args], {
      stdio: ["ignore", log, log],
      detached: true, // own process group, so Ctrl-C in a terminal does not reach the control plane
    });
    await new Promise<void>((resolveSpawn, reject) => {
      child.once("spawn", resolveSpawn);
      child.once("error", reject);
    });
    const pid = child.pid;
    if (pid === undefined) throw new Error(`local-cluster: ${options.name} did not start`);
    if (options.detached) {
      child.unref();
    } else {
      attached.add(pid);
      child.once("exit", () => attached.delete(pid));
      installExitHook();
    }
    return { name: options.name, pid, logFile: options.logFile, command: [options.binary, ...options.args] };
  } finally {
    closeSync(log);
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM means it exists but belongs to someone else: not ours to stop, but alive.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Stops a process: SIGTERM, then SIGKILL after the grace period. Resolves when the pid is gone.
 * Signals go to the pid only; each process we start leads its own group, so children go with it.
 */
export async function stopProcess(pid: number, graceMs = 10_000): Promise<void> {
  if (!signal(pid, "SIGTERM")) return;
  const deadline = Date.now() + graceMs;
  while (isAlive(pid) && Date.now() < deadline) await delay(50);
  if (isAlive(pid)) {
    signal(pid, "SIGKILL");
    const killDeadline = Date.now() + 5_000;
    while (isAlive(pid) && Date.now() < killDeadline) await delay(50);
  }
  if (isAlive(pid)) throw new Error(`local-cluster: process ${pid} survived SIGKILL`);
}

function signal(pid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw error;
  }
}

/**
 * A test run that crashes or is interrupted must not leak an apiserver: kill attached processes
 * when this process exits. Node skips "exit" handlers on a signal it has no handler for, so the
 * usual termination signals are caught too, and re-raised once the children are gone.
 */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  const killAttached = (): void => {
    for (const pid of attached) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    attached.clear();
  };
  process.on("exit", killAttached);
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(sig, () => {
      killAttached();
      process.kill(process.pid, sig);
    });
  }
}
