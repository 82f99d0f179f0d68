/**
 * Imported first by main.ts. A reconciler started by the manager (process mode) has an IPC channel
 * to it. The child stops as if it got SIGTERM when the channel closes (the manager died, even by
 * SIGKILL), and when the manager's heartbeats stop (a frozen manager, whose channel stays open while
 * a standby takes the lease): no reconciler outlives, or runs beside the successor of, its manager.
 */
import { HeartbeatWatchdog, isHeartbeat } from "./parent-heartbeat.ts";

const forcedExitMs = 15_000;

let stopping = false;

/** Once: main.ts stops at the first SIGTERM, and a second one would end the process on the spot. */
function stopAsOnSigterm(): void {
  if (stopping) return;
  stopping = true;
  process.kill(process.pid, "SIGTERM");
  setTimeout(() => process.exit(1), forcedExitMs).unref();
}

/** Written by hand: the logger is not loaded yet when this module runs. */
function logSilence(deadlineMs: number): void {
  process.stderr.write(
    `${JSON.stringify({ time: new Date().toISOString(), level: "warn", msg: "no heartbeat from the manager: stopping, as a successor may run this sync", deadlineMs })}\n`,
  );
}

if (process.channel !== undefined) {
  // The channel must not keep the child alive on its own, nor delay its normal exit (its listeners do
  // not ref it again once unref() was called).
  process.channel.unref();
  const watchdog = new HeartbeatWatchdog((deadlineMs) => {
    logSilence(deadlineMs);
    stopAsOnSigterm();
  });
  process.on("message", (message) => {
    if (isHeartbeat(message)) watchdog.beat(message.deadlineMs);
  });
  process.once("disconnect", () => {
    watchdog.stop();
    stopAsOnSigterm();
  });
}
