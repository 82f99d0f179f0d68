import type { SyncIdentity } from "@driftless/applier";
import type { Logger } from "./log.ts";
import type { Renderer } from "./rendering.ts";

/** What `Reconciler.start` is given: which sync, where its cluster, Redis and caches are, and how it runs. */
export interface ReconcilerOptions {
  readonly identity: SyncIdentity;
  /** Kubeconfig path; undefined means in-cluster (or the default loading rules). */
  readonly kubeconfig?: string;
  /** Deadline of one API server request (override.apiServerTimeout, from the manager); default 15 s, as Config Sync's. */
  readonly apiServerTimeoutMs?: number;
  readonly redisUrl: string;
  /** BullMQ key prefix; tests isolate themselves with their own. */
  readonly queuePrefix?: string;
  /** Where git caches and checkouts live. */
  readonly cacheDir: string;
  /** 0 picks a free port; undefined serves no metrics. */
  readonly metricsPort?: number;
  readonly concurrency?: number;
  /** Overrides spec.git.period (tests). */
  readonly pollPeriodMs?: number;
  /**
   * A poll that finds the same commit and spec as the last complete pass skips the apply, except
   * once per this period (default 5 minutes; 0 applies on every poll). Drift in between is the
   * remediator's job; the resync repairs anything a watch missed.
   */
  readonly resyncPeriodMs?: number;
  /** Serve current state from watch caches (default) or GET each object. */
  readonly useWatchCache?: boolean;
  /** This cluster's name, for cluster selectors in the source (Config Sync's `--cluster-name`); undefined: none. */
  readonly clusterName?: string;
  /** Allow file:// repositories (local mode, tests). Off by default: a RepoSync could read the node's files. */
  readonly allowFileTransport?: boolean;
  /** The folder holding kustomize and helm (built by packages/sync/scripts/build-render-tools.sh); undefined: PATH. */
  readonly renderToolsDir?: string;
  /** Who runs kustomize: default a child of this process, or the render container at `renderSocket`. */
  readonly renderer?: Renderer;
  /**
   * Deployment mode: the socket of the pod's render container (hydration-controller), which renders
   * instead of a child process. The pod has that container only while the RSync is annotated
   * `configsync.gke.io/requires-rendering: "true"`, which this reconciler keeps true to each commit;
   * without it, a source that needs rendering is reported as waiting (render-container-gate.ts).
   */
  readonly renderSocket?: string;
  /** Honour a RepoSync's spec.override.enableShellInRendering (the manager's --allow-reposync-shell-in-rendering). */
  readonly allowRepoSyncShellInRendering?: boolean;
  readonly log?: Logger;
}
