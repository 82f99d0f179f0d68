import { KubeClient, type KubeObject, type ResourceMapping } from "@driftless/kube";

const verbs = ["get", "list"] as const;
const syncs: readonly ResourceMapping[] = [
  { group: "configsync.gke.io", version: "v1beta1", kind: "RootSync", resource: "rootsyncs", namespaced: true, verbs },
  { group: "configsync.gke.io", version: "v1beta1", kind: "RepoSync", resource: "reposyncs", namespaced: true, verbs },
];

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}

/** One line per sync: its commit, whether it is syncing, and its error count. */
export function statusLine(sync: KubeObject): string {
  const status = (sync["status"] ?? {}) as {
    lastSyncedCommit?: string;
    conditions?: Condition[];
    source?: { errorSummary?: { totalCount?: number } };
    sync?: { errorSummary?: { totalCount?: number } };
  };
  const syncing = status.conditions?.find((c) => c.type === "Syncing");
  // The manager's word when the reconciler cannot be set up or keeps failing.
  const stalled = status.conditions?.find((c) => c.type === "Stalled" && c.status === "True");
  const errors = (status.source?.errorSummary?.totalCount ?? 0) + (status.sync?.errorSummary?.totalCount ?? 0);
  const state =
    stalled !== undefined
      ? "STALLED"
      : syncing === undefined
        ? "PENDING"
        : syncing.status === "True"
          ? "SYNCING"
          : errors > 0
            ? "ERROR"
            : "SYNCED";
  const commit = (status.lastSyncedCommit ?? "").slice(0, 12) || "-";
  const message = stalled?.message ?? syncing?.message;
  return `${sync.kind.padEnd(8)} ${`${sync.metadata.namespace ?? ""}/${sync.metadata.name}`.padEnd(48)} ${state.padEnd(8)} ${commit.padEnd(12)} ${errors} error(s)${message ? `  ${message}` : ""}`;
}

/** `driftless status`: every RootSync and RepoSync in the cluster. Exit 1 when any has errors. */
export async function status(kubeconfig: string | undefined, out: (line: string) => void): Promise<number> {
  const client = await KubeClient.fromKubeconfig(kubeconfig);
  try {
    let failing = 0;
    out(`${"KIND".padEnd(8)} ${"NAMESPACE/NAME".padEnd(48)} ${"STATE".padEnd(8)} ${"COMMIT".padEnd(12)} ERRORS`);
    for (const mapping of syncs) {
      const list = await client.list(mapping);
      for (const item of list.items) {
        const line = statusLine(item);
        if (line.includes(" ERROR ") || line.includes(" STALLED ")) failing++;
        out(line);
      }
    }
    return failing === 0 ? 0 : 1;
  } finally {
    client.close();
  }
}
