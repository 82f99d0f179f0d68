/**
 * Status while a long apply runs. Config Sync's reconciler rewrites status.sync every 5 s while it syncs
 * (DefaultReconcilerSyncStatusUpdatePeriod), so a commit waiting minutes for a Deployment shows on
 * status.source, status.rendering and status.sync at once, not only once the wait is over. A pass that ends
 * within the period writes nothing more than before.
 */

/** Config Sync's period of status updates while syncing. */
export const syncProgressPeriodMs = 5_000;

export interface SyncProgress {
  /** Stops the updates and waits for one still being written, so the pass's own status write comes last. */
  stop(): Promise<void>;
}

/** Calls `write` every `periodMs` until stopped, one write at a time; a failed write waits for the next period. */
export function startSyncProgress(
  write: () => Promise<void>,
  onError: (error: unknown) => void,
  periodMs = syncProgressPeriodMs,
): SyncProgress {
  let running: Promise<void> | undefined;
  let stopped = false;
  const timer = setInterval(() => {
    // A period that finds a write still in flight (a slow API server) adds none: queued behind it, they would be
    // sent back to back, each saying what the next one says, when the server can least take them.
    if (stopped || running !== undefined) return;
    running = write()
      .catch(onError)
      .finally(() => (running = undefined));
  }, periodMs);
  timer.unref();
  return {
    async stop(): Promise<void> {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
