/**
 * Imported first by main.ts. A reconciler started by the manager (process mode) has an IPC channel
 * to it; when the manager dies, even by SIGKILL, the channel closes: the child then stops as if it
 * got SIGTERM, so no reconciler outlives its manager (a restarted manager starts fresh children).
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
