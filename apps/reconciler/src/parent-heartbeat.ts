/**
 * The manager's heartbeat over the IPC channel (process mode). A frozen manager (SIGSTOP, a paused VM)
 * keeps its channel open, so without it the children would run on beside the reconcilers a standby
 * starts for the same syncs once it takes the lease: two remediators guarding different commits, or
 * one undoing the other's release of a deleted sync's objects.
 */

/** What the manager sends (packages/controller's child-heartbeat.ts): stop after `deadlineMs` without another. */
export interface Heartbeat {
  readonly type: "heartbeat";
  readonly deadlineMs: number;
}

export function isHeartbeat(message: unknown): message is Heartbeat {
  if (typeof message !== "object" || message === null) return false;
  const { type, deadlineMs } = message as { type?: unknown; deadlineMs?: unknown };
  return type === "heartbeat" && typeof deadlineMs === "number" && Number.isFinite(deadlineMs) && deadlineMs > 0;
}

/**
 * Calls `onSilence` once when no heartbeat came for the deadline the last one named. Armed by the
 * first heartbeat: a manager that sends none (an older one) is watched by the channel alone. Silence
 * is judged by when the last heartbeat was read, after the channel's waiting messages are: a child
 * whose own event loop was blocked past the deadline (a long GC, a starved CPU) finds the timer due
 * before it has read the heartbeats that came meanwhile, and must not stop for that.
 */
export class HeartbeatWatchdog {
  readonly #onSilence: (deadlineMs: number) => void;
  readonly #now: () => number;
  #timer: NodeJS.Timeout | undefined;
  #lastBeat = 0;
  #deadlineMs = 0;
  #fired = false;

  constructor(onSilence: (deadlineMs: number) => void, now: () => number = () => performance.now()) {
    this.#onSilence = onSilence;
    this.#now = now;
  }

  beat(deadlineMs: number): void {
    if (this.#fired) return;
    this.#lastBeat = this.#now();
    this.#deadlineMs = deadlineMs;
    this.#arm(deadlineMs);
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#fired = true;
  }

  #arm(delayMs: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      // setImmediate runs after this turn's poll phase, which reads the heartbeats already waiting.
      setImmediate(() => this.#check()).unref();
    }, delayMs);
    // The watchdog must not keep a stopping reconciler alive.
    this.#timer.unref();
  }

  #check(): void {
    if (this.#fired) return;
    const silentMs = this.#now() - this.#lastBeat;
    if (silentMs < this.#deadlineMs) return this.#arm(this.#deadlineMs - silentMs);
    this.#fired = true;
    this.#onSilence(this.#deadlineMs);
  }
}
