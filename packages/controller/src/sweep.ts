/**
 * Finds reconcilers whose sync no longer exists: a sync deleted while no manager ran (so without
 * the manager's finalizer's help, e.g. force-removed) leaves its ServiceAccount, bindings and
 * workload behind. Their ServiceAccounts carry the sync's identity in labels; a job for each one
 * whose sync is gone tears the rest down.
 */
import { RootSyncNamespace } from "@driftless/api";
import type { KubeClient } from "@driftless/kube";
import type { SyncRef } from "@driftless/queue";
import { managedByManagerSelector, syncOfLabels } from "./labels.ts";
import { Resource, syncMapping } from "./resources.ts";
import { syncKeyOf } from "./workload.ts";

export interface KnownSyncs {
  syncRefs(): SyncRef[];
  /** A kind whose syncs were never listed (its CRD answered 404): none of its reconcilers is taken for an orphan. */
  unlisted(kind: SyncRef["kind"]): boolean;
}

export async function sweepOrphans(client: KubeClient, known: KnownSyncs): Promise<SyncRef[]> {
  const seen = new Set(known.syncRefs().map(syncKeyOf));
  const { items } = await client.list(Resource.ServiceAccount, {
    namespace: RootSyncNamespace,
    labelSelector: managedByManagerSelector,
  });
  const orphans: SyncRef[] = [];
  for (const sa of items) {
    const sync = syncOfLabels(sa.metadata.labels);
    if (sync === undefined || seen.has(syncKeyOf(sync)) || known.unlisted(sync.kind)) continue;
    // Not in our watch: gone, or served by another manager (another selector). Only the first is ours to clean.
    if ((await client.get(syncMapping(sync.kind), sync.namespace, sync.name)) === undefined) orphans.push(sync);
  }
  return orphans;
}
