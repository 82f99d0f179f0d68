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

/** Names the sync on the RoleBindings of its own Roles, which carry no configsync.gke.io/sync-name. */
const OwnRoleOfLabel = "driftless.dev/own-role-of";

/**
 * On the RoleBinding of one of a sync's own Roles (rbac-plan.ts): Config Sync's four labels select
 * exactly a RootSync's roleRef bindings (its manager lists them so, and its e2e tests count them), so
 * this one, which Config Sync does not make, names the sync in a label of ours instead of sync-name.
 */
export function ownRoleBindingLabels(sync: SyncRef): Record<string, string> {
  const labels: Record<string, string> = { ...syncOwnedLabels(sync), [OwnRoleOfLabel]: sync.name };
  delete labels[SyncLabel.SyncName];
  return labels;
}

function selectorOf(labels: Record<string, string>): string {
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
}

/** A label selector matching the objects of one sync. */
export function syncOwnedSelector(sync: SyncRef): string {
  return selectorOf(syncOwnedLabels(sync));
}

/** A label selector matching the RoleBindings of one sync's own Roles. */
export function ownRoleBindingSelector(sync: SyncRef): string {
  return selectorOf(ownRoleBindingLabels(sync));
}

/** The sync an object belongs to, from its labels; undefined for shared or foreign objects. */
export function syncOfLabels(labels: Readonly<Record<string, string>> | undefined): SyncRef | undefined {
  if (labels?.[ManagedByKey] !== ManagedByManager) return undefined;
  return syncNamedBy(labels);
}

/** Config Sync's reconciler-manager marks what it makes per sync by this label, not app.kubernetes.io's. */
const ConfigSyncManagedByKey = "configsync.gke.io/managed-by";

/**
 * The sync Config Sync's reconciler-manager made an object for (its ServiceAccount or reconciler Deployment,
 * left behind when driftless takes over): undefined for driftless's own objects and foreign ones.
 */
export function configSyncSyncOfLabels(labels: Readonly<Record<string, string>> | undefined): SyncRef | undefined {
  if (labels?.[ConfigSyncManagedByKey] !== ManagedByManager) return undefined;
  return syncNamedBy(labels);
}

function syncNamedBy(labels: Readonly<Record<string, string>>): SyncRef | undefined {
  const kind = labels[SyncLabel.SyncKind];
  const name = labels[SyncLabel.SyncName] ?? labels[OwnRoleOfLabel];
  const namespace = labels[SyncLabel.SyncNamespace];
  if (!isSyncKind(kind) || name === undefined || namespace === undefined) return undefined;
  return { kind, name, namespace };
}
