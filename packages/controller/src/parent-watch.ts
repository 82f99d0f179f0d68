/**
 * Preloaded into every reconciler child process (`node --import`). When the manager dies, even
 * by SIGKILL, the IPC channel it opened closes: the child then stops as if it got SIGTERM, so no
 * reconciler outlives its manager (a restarted manager starts fresh children of its own).
 */
const forcedExitMs = 15_000;

if (process.channel !== undefined) {
  // The channel must not keep the child alive on its own, nor delay its normal exit.
  process.channel.unref();
  process.once("disconnect", () => {
    process.kill(process.pid, "SIGTERM");
    setTimeout(() => process.exit(1), forcedExitMs).unref();
  });
}
