/**
 * Labels on what the manager creates for a sync (ServiceAccount, bindings, Deployment). They let
 * the manager find every piece of a sync's reconciler again (for teardown, and for a sync deleted
 * while no manager ran) without remembering anything itself.
 */
import { isSyncKind, SyncLabel } from "@driftless/api";
import type { SyncRef } from "@driftless/queue";

/** Config Sync's `app.kubernetes.io/managed-by` value for the reconciler manager's objects. */
export const ManagedByManager = "reconciler-manager";
const ManagedByKey = "app.kubernetes.io/managed-by";

/** Selects everything the manager created, shared or per sync. */
export const managedByManagerSelector = `${ManagedByKey}=${ManagedByManager}`;

/** On objects shared by several syncs (the shared role bindings). */
export function sharedLabels(): Record<string, string> {
  return { [ManagedByKey]: ManagedByManager };
}

/** On objects that belong to exactly one sync. */
export function syncOwnedLabels(sync: SyncRef): Record<string, string> {
  return {
    [ManagedByKey]: ManagedByManager,
    [SyncLabel.SyncKind]: sync.kind,
    [SyncLabel.SyncName]: sync.name,
    [SyncLabel.SyncNamespace]: sync.namespace,
  };
}

/** A label selector matching the objects of one sync. */
export function syncOwnedSelector(sync: SyncRef): string {
  return Object.entries(syncOwnedLabels(sync))
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
}

/** The sync an object belongs to, from its labels; undefined for shared or foreign objects. */
export function syncOfLabels(labels: Readonly<Record<string, string>> | undefined): SyncRef | undefined {
  if (labels?.[ManagedByKey] !== ManagedByManager) return undefined;
  const kind = labels[SyncLabel.SyncKind];
  const name = labels[SyncLabel.SyncName];
  const namespace = labels[SyncLabel.SyncNamespace];
  if (!isSyncKind(kind) || name === undefined || namespace === undefined) return undefined;
  return { kind, name, namespace };
}
