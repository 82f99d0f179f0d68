import type { KubeClient } from "@driftless/kube";
import type { ManagerMetrics, SyncLabelSet } from "@driftless/metrics";
import { withoutRedisCredentials, type SyncRef } from "@driftless/queue";
import type { ClusterAccess } from "./credentials.ts";
import { heartbeatTiming } from "./child-heartbeat.ts";
import { DeploymentWorkload } from "./deployment-workload.ts";
import { leaderElectionTimings } from "./leader-election.ts";
import type { ManagerOptions } from "./manager-options.ts";
import { ProcessWorkload } from "./process-workload.ts";
import type { ReconcilerRedisUsers } from "./redis-users.ts";
import { ReconcilerMode, type ReconcilerWorkload } from "./workload.ts";

/** The reconcilers of the manager's mode: a Deployment per sync, or a supervised child process. */
export function createWorkload(
  o: ManagerOptions,
  deps: {
    readonly client: KubeClient;
    readonly redisUsers: ReconcilerRedisUsers;
    readonly access: ClusterAccess | undefined;
    readonly metrics: ManagerMetrics;
    readonly onStateChange: (sync: SyncRef) => void;
  },
): ReconcilerWorkload {
  if (o.mode === ReconcilerMode.Deployment) {
    if (o.deployment === undefined) throw new Error("deployment mode needs the reconciler image");
    return new DeploymentWorkload(
      deps.client,
      {
        ...o.deployment,
        allowRepoSyncShellInRendering: o.allowRepoSyncShellInRendering === true,
        queuePrefix: o.queuePrefix,
        logLevel: o.logLevel,
        ...(o.clusterName === undefined ? {} : { clusterName: o.clusterName }),
      },
      deps.redisUsers,
    );
  }
  if (deps.access === undefined) throw new Error("process mode needs the cluster's address");
  return new ProcessWorkload({
    client: deps.client,
    access: deps.access,
    stateDir: o.stateDir,
    reconcilerEntry: o.reconcilerEntry,
    redisUrl: withoutRedisCredentials(o.redisUrl),
    redisUsers: deps.redisUsers,
    queuePrefix: o.queuePrefix,
    allowFileRepos: o.allowFileRepos,
    allowRepoSyncShellInRendering: o.allowRepoSyncShellInRendering === true,
    logLevel: o.logLevel,
    ...(o.clusterName === undefined ? {} : { clusterName: o.clusterName }),
    log: o.log,
    ...(o.stopGraceMs === undefined ? {} : { stopGraceMs: o.stopGraceMs }),
    ...(o.maxConcurrentStarts === undefined ? {} : { maxConcurrentStarts: o.maxConcurrentStarts }),
    // A frozen leader's children stop when it would stop acting itself, before a standby may take over.
    heartbeat: heartbeatTiming(leaderElectionTimings(o.leaderElection)),
    onStateChange: deps.onStateChange,
    onLifecycle: (sync, event) => {
      const labels = restartLabelsOf(sync);
      if (event === "removed") deps.metrics.reconcilerRestarts?.remove(labels);
      else deps.metrics.reconcilerRestarts?.inc(labels, event === "restarting" ? 1 : 0);
    },
  });
}

function restartLabelsOf(sync: SyncRef): SyncLabelSet {
  return {
    configsync_sync_kind: sync.kind,
    configsync_sync_name: sync.name,
    configsync_sync_namespace: sync.namespace,
  };
}
