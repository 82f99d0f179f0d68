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
 * first heartbeat: a manager that sends none (an older one) is watched by the channel alone.
 */
export class HeartbeatWatchdog {
  readonly #onSilence: (deadlineMs: number) => void;
  #timer: NodeJS.Timeout | undefined;
  #fired = false;

  constructor(onSilence: (deadlineMs: number) => void) {
    this.#onSilence = onSilence;
  }

  beat(deadlineMs: number): void {
    if (this.#fired) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#fired = true;
      this.#onSilence(deadlineMs);
    }, deadlineMs);
    // The watchdog must not keep a stopping reconciler alive.
    this.#timer.unref();
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#fired = true;
  }
}
