/**
 * Which ResourceGroups are a driftless reconciler's own inventory, and so not this controller's to write:
 * the reconciler keeps their status live itself, and two writers would undo each other's conditions.
 */
import { Kind, SyncLabel } from "@driftless/api";
import type { KubeObject } from "@driftless/kube";

/**
 * By its labels: the reconciler labels its sync's ResourceGroup with the sync's kind, name and namespace,
 * and the group has the sync's name and namespace. Decided from the object alone, so it holds for a sync
 * another manager serves, or one being deleted, as well.
 */
export function labelledSyncInventory(group: KubeObject): boolean {
  const labels = group.metadata.labels ?? {};
  const kind = labels[SyncLabel.SyncKind];
  return (
    (kind === Kind.RootSync || kind === Kind.RepoSync) &&
    labels[SyncLabel.SyncName] === group.metadata.name &&
    labels[SyncLabel.SyncNamespace] === group.metadata.namespace
  );
}
