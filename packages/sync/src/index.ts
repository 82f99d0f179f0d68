/**
 * @driftless/sync: one RootSync's or RepoSync's reconcile pipeline — fetch, read, plan, apply,
 * inventory, prune, status — with its queue worker, poller, remediator and deletion finalizer.
 * `apps/reconciler` is the process around `Reconciler`.
 *
 * @example
 * ```ts
 * import { Reconciler } from "@driftless/sync";
 *
 * const reconciler = await Reconciler.start({
 *   identity: { kind: "RepoSync", namespace: "team-a", name: "repo-sync" },
 *   kubeconfig: process.env.KUBECONFIG,
 *   redisUrl: "redis://127.0.0.1:6379",
 *   cacheDir: "/var/cache/driftless",
 *   metricsPort: 8675,
 * });
 * process.once("SIGTERM", () => void reconciler.stop());
 * ```
 */
export { Reconciler } from "./reconciler.ts";
export type { ReconcilerOptions } from "./reconciler-options.ts";
export { runPass, EmptySourceError } from "./pass.ts";
export type { PassResult, PassTrigger } from "./pass.ts";
export { ensureFinalizer, finalize, FinalizerError } from "./finalizer.ts";
export { HelmSource, HelmSourceError, helmTimeoutMs } from "./helm-source.ts";
export { FightError, Remediator } from "./remediator.ts";
export { createLogger, logCrashes } from "./log.ts";
export { PrivateTmpdirEnv, sweepStaleTempFolders } from "./stale-temp.ts";
export { waitForOlderReconcilers } from "./older-reconcilers.ts";
export { processEnvironment, processIds, processStat, tmpDirIsUnder } from "./process-table.ts";
export type { ProcessStat } from "./process-table.ts";
export type { Logger } from "./log.ts";
export { nextStatus, syncingStatus, writeStatus } from "./status.ts";
export type { PassReport } from "./status.ts";
export { rsyncMapping, loadSync } from "./rsync.ts";
export { forgetGroupCounts, recordGroupCounts } from "./resource-group-metrics.ts";
export type { CountedEntry, GroupCountMetrics } from "./resource-group-metrics.ts";
