/**
 * Finalizers on RootSync/RepoSync objects. Each has exactly one owner that adds and removes it,
 * so a stuck deletion always has someone to blame.
 */
export const Finalizer = {
  /**
   * Owned by the manager: held until the reconciler workload (Deployment or child process,
   * ServiceAccount, RBAC bindings) of the sync is torn down.
   */
  ReconcilerManager: "configsync.gke.io/reconciler-manager",
  /**
   * Owned by the reconciler: held while it deletes (Foreground) or un-manages (Orphan) the objects
   * the sync manages. The manager strips it when the RepoSync's namespace is Terminating, because
   * then the reconciler can no longer act and the namespace deletion would hang forever.
   */
  Reconciler: "configsync.gke.io/reconciler",
} as const;
export type Finalizer = (typeof Finalizer)[keyof typeof Finalizer];
