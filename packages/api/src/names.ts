/**
 * Names derived from a sync: its reconciler, the values stamped on managed objects, and its queue.
 * The formats are Config Sync's, byte for byte, because other tools (and a cluster migrating
 * between Config Sync and driftless) match on them.
 */
import { DefaultRepoSyncName, DefaultRootSyncName, RootSyncNamespace } from "./defaults.ts";
import { Kind, type SyncKind } from "./groups.ts";
import type { ObjectRef } from "./object-meta.ts";

export const RootReconcilerPrefix = "root-reconciler" as const;
export const NsReconcilerPrefix = "ns-reconciler" as const;

/** `root-reconciler` for RootSync `root-sync`, else `root-reconciler-<name>`. */
export function rootReconcilerName(syncName: string): string {
  return syncName === DefaultRootSyncName ? RootReconcilerPrefix : `${RootReconcilerPrefix}-${syncName}`;
}

/**
 * `ns-reconciler-<ns>` for RepoSync `repo-sync`, else `ns-reconciler-<ns>-<name>-<len(name)>`.
 * The length suffix keeps (ns "a-b", name "c") and (ns "a", name "b-c") apart.
 */
export function nsReconcilerName(namespace: string, syncName: string): string {
  return syncName === DefaultRepoSyncName
    ? `${NsReconcilerPrefix}-${namespace}`
    : `${NsReconcilerPrefix}-${namespace}-${syncName}-${syncName.length}`;
}

/** The reconciler name of either kind of sync. */
export function reconcilerName(kind: SyncKind, namespace: string, syncName: string): string {
  return kind === Kind.RootSync ? rootReconcilerName(syncName) : nsReconcilerName(namespace, syncName);
}

/** The scope written in manager annotations for a RootSync. */
export const RootManagerScope = ":root" as const;

/**
 * Value of `configsync.gke.io/manager`: `<scope>` for the default sync names, else
 * `<scope>_<name>`, where scope is `:root` for a RootSync and the namespace for a RepoSync.
 * (Config Sync drops the name whenever it is `root-sync` or `repo-sync`, whatever the kind.)
 */
export function managerAnnotationValue(kind: SyncKind, namespace: string, syncName: string): string {
  const scope = kind === Kind.RootSync ? RootManagerScope : namespace;
  if (syncName === DefaultRootSyncName || syncName === DefaultRepoSyncName) return scope;
  return `${scope}_${syncName}`;
}

/** The sync a manager annotation names, or undefined when the value is empty. */
export interface ManagerRef {
  readonly kind: SyncKind;
  /** config-management-system for RootSyncs. */
  readonly namespace: string;
  readonly name: string;
}

/** Inverse of `managerAnnotationValue`, for reporting who owns a conflicting object. */
export function parseManagerAnnotation(
  value: string | undefined,
  rootNamespace: string = RootSyncNamespace,
): ManagerRef | undefined {
  if (value === undefined || value === "") return undefined;
  const separator = value.indexOf("_");
  const scope = separator === -1 ? value : value.slice(0, separator);
  const name = separator === -1 ? undefined : value.slice(separator + 1);
  if (scope === "") return undefined;
  if (scope === RootManagerScope) {
    return { kind: Kind.RootSync, namespace: rootNamespace, name: name ?? DefaultRootSyncName };
  }
  return { kind: Kind.RepoSync, namespace: scope, name: name ?? DefaultRepoSyncName };
}

/** `config.k8s.io/owning-inventory` value and ResourceGroup inventory id: `<namespace>_<name>` of the sync. */
export function inventoryId(namespace: string, syncName: string): string {
  return `${namespace}_${syncName}`;
}

/** Suffix of the name of a sync's second ResourceGroup (driftless's: a large rename's new ids). */
export const InventoryOverflowSuffix = ".pending" as const;

/**
 * The ResourceGroups a sync's reconciler writes, in the sync's namespace: its own (the sync's name, as
 * Config Sync's) and the overflow group. Its per-sync Role grants exactly these names.
 */
export function inventoryGroupNames(syncName: string): readonly [main: string, overflow: string] {
  return [syncName, `${syncName}${InventoryOverflowSuffix}`];
}

/**
 * `configsync.gke.io/resource-id`: `<group>_<lowercase kind>_<namespace>_<name>`, or
 * `<group>_<lowercase kind>_<name>` for cluster-scoped objects. Only the kind is lowercased; the
 * core group is "", so a Namespace `prod` is `_namespace_prod`.
 */
export function resourceId(ref: ObjectRef): string {
  const kind = ref.kind.toLowerCase();
  const namespace = ref.namespace ?? "";
  return namespace === "" ? `${ref.group}_${kind}_${ref.name}` : `${ref.group}_${kind}_${namespace}_${ref.name}`;
}
