/**
 * One supervised child process: started, restarted with backoff when it dies, and stopped with
 * SIGTERM then SIGKILL. The child's
 * output goes to a log file of its own (one JSON log stream per reconciler, not interleaved).
 */
import { spawn, type ChildProcess } from "node:child_process";
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  renameSync,
  statSync,
  unlinkSync,
  type Stats,
} from "node:fs";
import type { Logger } from "@driftless/sync";
import { Backoff, type BackoffPolicy } from "./backoff.ts";
import { sendHeartbeats, type HeartbeatTiming } from "./child-heartbeat.ts";
import { lastErrorInLog } from "./exit-reason.ts";
import { killProcessesIn } from "./leftover-processes.ts";
import type { StartGate } from "./start-gate.ts";

export const ProcessState = {
  /** Spawned (or about to be) and not yet up for `stableAfterMs`. */
  Starting: "starting",
  /** Up for at least `stableAfterMs`. */
  Running: "running",
  /** Exited on its own; a restart is scheduled. */
  Failed: "failed",
  /** Being stopped. */
  Terminating: "terminating",
  Stopped: "stopped",
} as const;
export type ProcessState = (typeof ProcessState)[keyof typeof ProcessState];

/** What a (re)start runs: computed afresh each time, so credentials are minted per start. */
export interface LaunchSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export interface SupervisorOptions {
  readonly name: string;
  readonly prepare: () => Promise<LaunchSpec>;
  readonly logFile: string;
  readonly backoff: BackoffPolicy;
  /** A child up this long counts as running, and its crash restarts without accumulated backoff. */
  readonly stableAfterMs: number;
  /** Time between SIGTERM and SIGKILL. */
  readonly stopGraceMs: number;
  readonly log: Logger;
  readonly onStateChange?: (state: ProcessState) => void;
  /** The child exited on its own or could not be started, and a restart is scheduled. */
  readonly onRestart?: () => void;
  /** Shared by a manager's children: how many may be starting at once (no herd after a restart). */
  readonly gate?: StartGate;
  /** Heartbeats over the IPC channel: a child that stops hearing them stops itself (a frozen manager). */
  readonly heartbeat?: HeartbeatTiming;
}

/** Why the child last failed to start or stay up: shown on the sync's conditions until it runs again. */
export interface ProcessFailure {
  /** The child's own last error (its log), or how it ended. */
  readonly reason: string;
  /** Failures in a row without a healthy run between them. */
  readonly failures: number;
}

/** Log files are capped: past this size the previous file is kept as `.1` and a new one begun. */
const maxLogBytes = 20 * 1024 * 1024;

export class SupervisedProcess {
  readonly name: string;
  readonly #options: SupervisorOptions;
  readonly #backoff: Backoff;
  #state: ProcessState = ProcessState.Stopped;
  #child: ChildProcess | undefined;
  /** The private TMPDIR the current child was given: what it starts carries it (leftover-processes.ts). */
  #childTmpDir: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  #startedAt = 0;
  #exited: Promise<void> = Promise.resolve();
  #wanted = false;
  #starts = 0;
  #failure: ProcessFailure | undefined;
  /** Frees this child's start slot (see StartGate): when it says it is up or exits (or the gate's hold ends). */
  #releaseStart: () => void = () => undefined;

  constructor(options: SupervisorOptions) {
    this.name = options.name;
    this.#options = options;
    this.#backoff = new Backoff(options.backoff);
  }

  get state(): ProcessState {
    return this.#state;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** The last failure, until a child runs healthily again. */
  get failure(): ProcessFailure | undefined {
    return this.#failure;
  }

  /** How many times a child was spawned. */
  get starts(): number {
    return this.#starts;
  }

  start(): void {
    if (this.#wanted) return;
    this.#wanted = true;
    this.#launch();
  }

  /** Stops the child (SIGTERM, then SIGKILL after the grace period) and cancels any restart. */
  async stop(): Promise<void> {
    this.#wanted = false;
    clearTimeout(this.#timer);
    const child = this.#child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) {
      this.#setState(ProcessState.Stopped);
      return;
    }
    this.#setState(ProcessState.Terminating);
    terminate(child, this.#options.stopGraceMs);
    await this.#exited;
  }

  /** Synchronous last resort when the manager itself exits: no child may outlive it. */
  killNow(): void {
    this.#wanted = false;
    clearTimeout(this.#timer);
    this.#child?.kill("SIGKILL");
  }

  #launch(): void {
    this.#setState(ProcessState.Starting);
    const slot = this.#options.gate?.acquire() ?? Promise.resolve(() => undefined);
    slot
      .then((release) => {
        this.#releaseStart = release;
        if (!this.#wanted) throw new StoppedBeforeStart();
        return this.#options.prepare();
      })
      .then((spec) => {
        if (this.#wanted) this.#spawn(spec);
        else this.#releaseStart();
      })
      .then(
        () => undefined,
        (error: unknown) => {
          this.#releaseStart();
          if (error instanceof StoppedBeforeStart) return;
          this.#options.log.warn("could not prepare or start the reconciler process", {
            reconciler: this.name,
            error: String(error),
          });
          this.#noteFailure(`could not start the process: ${error instanceof Error ? error.message : String(error)}`);
          this.#scheduleRestart();
        },
      );
  }

  #spawn(spec: LaunchSpec): void {
    rotate(this.#options.logFile);
    const fd = openOwnLog(this.#options.logFile);
    let child: ChildProcess;
    try {
      // The IPC channel is how the child notices the manager is gone, even after a SIGKILL, or silent, frozen
      // (see apps/reconciler/src/parent-watch.ts).
      child = spawn(spec.command, [...spec.args], {
        stdio: ["ignore", fd, fd, "ipc"],
        env: { ...process.env, ...spec.env },
      });
    } finally {
      closeSync(fd);
    }
    this.#child = child;
    this.#childTmpDir = spec.env?.["TMPDIR"];
    // The reconciler sends {type: "ready"} once it is up (apps/reconciler main.ts).
    child.on("message", (message: { type?: unknown } | null) => {
      if (message?.type === "ready") this.#releaseStart();
    });
    if (this.#options.heartbeat !== undefined) sendHeartbeats(child, this.#options.heartbeat);
    this.#starts++;
    this.#startedAt = Date.now();
    this.#exited = new Promise((resolve) => {
      child.once("exit", (code, signal) => {
        this.#onExit(child, code, signal);
        resolve();
      });
    });
    child.once("error", (error) =>
      this.#options.log.warn("reconciler process error", { reconciler: this.name, error: error.message }),
    );
    this.#options.log.info("reconciler process started", {
      reconciler: this.name,
      pid: child.pid,
      logFile: this.#options.logFile,
    });
    this.#timer = setTimeout(() => {
      if (this.#child !== child || this.#state !== ProcessState.Starting) return;
      this.#failure = undefined;
      this.#setState(ProcessState.Running);
    }, this.#options.stableAfterMs);
  }

  #onExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.#child !== child) return;
    this.#child = undefined;
    this.#killLeftovers();
    this.#releaseStart();
    clearTimeout(this.#timer);
    const upMs = Date.now() - this.#startedAt;
    if (!this.#wanted) {
      this.#options.log.info("reconciler process stopped", { reconciler: this.name, code, signal });
      this.#setState(ProcessState.Stopped);
      return;
    }
    // A long healthy run means this crash is news, not the next in a loop.
    if (upMs >= this.#options.stableAfterMs) {
      this.#backoff.reset();
      this.#failure = undefined;
    }
    const ended = signal !== null ? `killed by ${signal}` : `exit code ${code ?? "?"}`;
    const reason = lastErrorInLog(this.#options.logFile);
    this.#noteFailure(`${ended} after ${Math.round(upMs / 1000)} s${reason === undefined ? "" : `: ${reason}`}`);
    this.#options.log.warn("reconciler process exited", {
      reconciler: this.name,
      code,
      signal,
      upSeconds: Math.round(upMs / 1000),
      ...(reason === undefined ? {} : { reason }),
    });
    this.#scheduleRestart();
  }

  /** The tools a child left running when it died without stopping them (a SIGKILL, an OOM kill). */
  #killLeftovers(): void {
    const tmpDir = this.#childTmpDir;
    if (tmpDir === undefined) return;
    const killed = killProcessesIn(tmpDir);
    if (killed.length > 0) {
      this.#options.log.warn("killed processes the reconciler left running", { reconciler: this.name, pids: killed });
    }
  }

  #noteFailure(reason: string): void {
    this.#failure = { reason, failures: (this.#failure?.failures ?? 0) + 1 };
  }

  #scheduleRestart(): void {
    if (!this.#wanted) return;
    const delayMs = this.#backoff.next();
    this.#options.onRestart?.();
    this.#setState(ProcessState.Failed);
    this.#options.log.info("restarting the reconciler process", {
      reconciler: this.name,
      inMs: delayMs,
      attempt: this.#backoff.attempts,
    });
    this.#timer = setTimeout(() => {
      if (this.#wanted) this.#launch();
    }, delayMs);
  }

  #setState(state: ProcessState): void {
    if (state === this.#state) return;
    this.#state = state;
    this.#options.onStateChange?.(state);
  }
}

/**
 * SIGTERM lets the reconciler finish its pass and close its queue; SIGCONT wakes a stopped
 * (frozen) process so it can act on it; SIGKILL ends one that does not stop in time.
 */
function terminate(child: ChildProcess, graceMs: number): void {
  child.kill("SIGTERM");
  child.kill("SIGCONT");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  child.once("exit", () => clearTimeout(timer));
}

function rotate(file: string): void {
  try {
    if (statSync(file).size > maxLogBytes) renameSync(file, `${file}.1`);
  } catch {
    // No log yet: nothing to rotate.
  }
}

const appendFlags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;

/**
 * The log for appending, a regular file of our own readable by us only. Anything else at that path (a
 * file another user made first, a symlink to elsewhere, a FIFO that would block) is replaced, not written.
 */
function openOwnLog(file: string): number {
  const existing = lstatOrUndefined(file);
  if (existing !== undefined && !isOwnPrivateFile(existing)) unlinkSync(file);
  const fd = openSync(file, appendFlags, 0o600);
  // O_NOFOLLOW stops a symlink made since the lstat; this stops a file of someone else's made since.
  if (isOwnPrivateFile(fstatSync(fd))) return fd;
  closeSync(fd);
  throw new Error(`${file} was replaced by a file the manager does not own while it was being opened`);
}

function isOwnPrivateFile(stats: Stats): boolean {
  const uid = process.getuid?.();
  return stats.isFile() && (uid === undefined || stats.uid === uid) && (stats.mode & 0o077) === 0;
}

function lstatOrUndefined(file: string): Stats | undefined {
  try {
    return lstatSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** The child was stopped while it waited for a start slot. */
class StoppedBeforeStart extends Error {}
