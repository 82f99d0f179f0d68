import type { Logger } from "@driftless/sync";
import type { DeploymentSettings } from "./deployment-spec.ts";
import type { ReconcilerMode } from "./workload.ts";

export interface ManagerOptions {
  readonly kubeconfig: string | undefined;
  /** With the admin password, which only the manager holds; reconcilers get users of their own. */
  readonly redisUrl: string;
  readonly mode: ReconcilerMode;
  /** undefined: no metrics server; 0: a free port. */
  readonly metricsPort: number | undefined;
  readonly webhook: { readonly port: number; readonly secret: string } | undefined;
  readonly queuePrefix: string | undefined;
  readonly allowFileRepos: boolean;
  /** Honour spec.override.enableShellInRendering on RepoSyncs; off, such a RepoSync is refused (validate.ts). */
  readonly allowRepoSyncShellInRendering?: boolean;
  /** Serve only syncs with these labels (several managers on one cluster, tests). */
  readonly syncSelector: string | undefined;
  /**
   * Compute the status of ResourceGroups no reconciler keeps (Config Sync's resource-group-controller).
   * Default: in process mode without a syncSelector (managers splitting the syncs would each write them;
   * a cluster runs driftless-resource-group-controller, whose identity may read every kind).
   */
  readonly resourceGroupController?: boolean;
  readonly leaseName: string;
  readonly identity: string;
  /** Process mode: where reconciler kubeconfigs, logs and caches live. */
  readonly stateDir: string;
  /** Process mode: the reconciler's entry point. */
  readonly reconcilerEntry: string;
  /** Deployment mode: how reconciler Deployments are built. */
  readonly deployment:
    Omit<DeploymentSettings, "queuePrefix" | "logLevel" | "clusterName" | "allowRepoSyncShellInRendering"> | undefined;
  /** This cluster's name, handed to every reconciler for cluster selectors (Config Sync's `--cluster-name`). */
  readonly clusterName?: string;
  readonly resyncMs: number;
  readonly logLevel: string;
  readonly log: Logger;
  readonly concurrency?: number;
  readonly leaderElection?: {
    readonly leaseDurationMs?: number;
    readonly renewDeadlineMs?: number;
    readonly retryPeriodMs?: number;
  };
  /** Process mode: time a reconciler gets between SIGTERM and SIGKILL. */
  readonly stopGraceMs?: number;
  /** Process mode: reconcilers that may be starting at once (no herd after a restart). */
  readonly maxConcurrentStarts?: number;
  /** How often the leader looks for reconciler Redis users that Redis lost (default 10 s). */
  readonly redisUserCheckMs?: number;
}

/** Why the manager ended on its own (the shell exits non-zero on it). */
export type ManagerEnd = { readonly reason: "leadership-lost" };
