/**
 * The heartbeat a process-mode manager sends each reconciler child over its IPC channel. A frozen
 * manager (SIGSTOP, a paused VM) keeps the channel open, so the channel's close alone would leave its
 * children running beside the ones the standby starts once it takes the lease; silent for the deadline,
 * a child stops itself (apps/reconciler/src/parent-watch.ts).
 */
import type { ChildProcess } from "node:child_process";
import type { LeaderElectionTimings } from "./leader-election.ts";

export interface HeartbeatTiming {
  readonly everyMs: number;
  /** Sent with every heartbeat: the child stops once this long passes without another. */
  readonly deadlineMs: number;
}

/**
 * Every retry period, with the renew deadline: a frozen leader's children stop when it would have stopped
 * acting itself, which is before a standby may take the lease (lease duration, 15 s by default).
 */
export function heartbeatTiming(timings: LeaderElectionTimings): HeartbeatTiming {
  return { everyMs: timings.retryPeriodMs, deadlineMs: timings.renewDeadlineMs };
}

/** Sends heartbeats to `child` until it exits. */
export function sendHeartbeats(child: ChildProcess, timing: HeartbeatTiming): void {
  const message = { type: "heartbeat", deadlineMs: timing.deadlineMs } as const;
  const send = (): void => {
    // A child exiting closes the channel under a send: its exit is reported by the supervisor.
    if (child.connected) child.send(message, () => undefined);
  };
  send();
  const timer = setInterval(send, timing.everyMs);
  timer.unref();
  child.once("exit", () => clearInterval(timer));
}
