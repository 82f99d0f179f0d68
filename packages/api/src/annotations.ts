/**
 * Labels and annotations driftless writes or honours. Keys and values are Config Sync's, so
 * objects applied by Config Sync are recognised as managed (and vice versa) and tools such as
 * `nomos status` keep working.
 */

/** Annotations driftless writes on every object it manages. */
export const ManagedAnnotation = {
  /** `enabled` on managed objects. A user may declare `disabled` in the source to stop management. */
  Managed: "configmanagement.gke.io/managed",
  /** Which sync manages the object: see `managerAnnotationValue`. Used to detect management conflicts. */
  Manager: "configsync.gke.io/manager",
  /** `<group>_<kind>_<namespace>_<name>`: see `resourceId`. Guards against adopting a look-alike object. */
  ResourceId: "configsync.gke.io/resource-id",
  /** `<sync namespace>_<sync name>`: the inventory (ResourceGroup) that owns the object; pruning requires it. */
  OwningInventory: "config.k8s.io/owning-inventory",
  /** Slash-separated path of the declaring file from the repository root, the sync's directory included (as Config Sync writes it). */
  SourcePath: "configmanagement.gke.io/source-path",
  /** The commit the object was last applied from. */
  Token: "configmanagement.gke.io/token",
  /** JSON `{"repo","branch","rev"}` of the sync's source, as Config Sync writes it (see `gitContextValue`). */
  GitContext: "configsync.gke.io/git-context",
  /** This cluster's name (the manager's `--cluster-name`), on objects declared in files, when it has one. */
  ClusterName: "configmanagement.gke.io/cluster-name",
} as const;
export type ManagedAnnotation = (typeof ManagedAnnotation)[keyof typeof ManagedAnnotation];

/**
 * Annotations Config Sync writes that driftless does not (git-context, listed here too, it does:
 * ManagedAnnotation.GitContext), so they can be recognised and removed when an object stops being managed.
 */
export const ConfigSyncOnlyAnnotation = {
  /** Server-side-apply style record of the declared fields. */
  DeclaredFields: "configsync.gke.io/declared-fields",
  /** JSON {repo, branch, rev} of the source; driftless writes it too (ManagedAnnotation.GitContext). */
  GitContext: "configsync.gke.io/git-context",
  /** Legacy (pre multi-repo) copy of the declared object. */
  DeclaredConfig: "configmanagement.gke.io/declared-config",
} as const;

export const ManagedValue = {
  Enabled: "enabled",
  Disabled: "disabled",
} as const;
export type ManagedValue = (typeof ManagedValue)[keyof typeof ManagedValue];

export const ManagedLabel = {
  /** `app.kubernetes.io/managed-by: configmanagement.gke.io` on every managed object. */
  ManagedBy: "app.kubernetes.io/managed-by",
  /** Config Sync sets the apiVersion an object was declared with; removed when unmanaging. */
  DeclaredVersion: "configsync.gke.io/declared-version",
} as const;

export const ManagedByValue = "configmanagement.gke.io" as const;

/**
 * ApplySet (KEP-3659) metadata, as Config Sync writes it: every managed object is labelled part of
 * its sync's set, and the RootSync/RepoSync is the set's parent, so `kubectl get -l` and ApplySet
 * tooling find the members.
 */
export const ApplySetLabel = {
  /** On managed objects: the id of the set they belong to. */
  PartOf: "applyset.kubernetes.io/part-of",
  /** On the RSync (the parent): the set's id. */
  Id: "applyset.kubernetes.io/id",
} as const;

export const ApplySetAnnotation = {
  /** On the RSync: which tool manages the set, `<name>/<version>`. */
  Tooling: "applyset.kubernetes.io/tooling",
} as const;

/**
 * Config Sync's tooling value (a fixed version, so every release lists the same sets); driftless
 * uses it too, so a cluster moving between the two keeps one set.
 */
export const ApplySetToolingName = "configsync.gke.io" as const;
export const ApplySetToolingValue = "configsync.gke.io/v1" as const;

/** The field manager Config Sync's reconcilers server-side apply with. */
export const ConfigSyncFieldManager = "configsync.gke.io" as const;

/** Annotation keys to remove when an object leaves management (Orphan deletion, `managed: disabled`). */
export const ManagementAnnotationKeys: readonly string[] = [
  ManagedAnnotation.Managed,
  ManagedAnnotation.Manager,
  ManagedAnnotation.ResourceId,
  ManagedAnnotation.OwningInventory,
  ManagedAnnotation.SourcePath,
  ManagedAnnotation.Token,
  ManagedAnnotation.ClusterName,
  ConfigSyncOnlyAnnotation.DeclaredFields,
  ConfigSyncOnlyAnnotation.GitContext,
  ConfigSyncOnlyAnnotation.DeclaredConfig,
];

/** Label keys to remove when an object leaves management (managed-by only if its value is ours). */
export const ManagementLabelKeys: readonly string[] = [
  ManagedLabel.ManagedBy,
  ManagedLabel.DeclaredVersion,
  ApplySetLabel.PartOf,
];

/** Annotations a user may put on objects in the source; driftless acts on them. */
export const UserAnnotation = {
  /** Apply/prune ordering: `<group>/namespaces/<ns>/<kind>/<name>` or `<group>/<kind>/<name>`, comma-separated. */
  DependsOn: "config.kubernetes.io/depends-on",
  /** Any value but `false` keeps the object out of the cluster (kpt function config and the like). */
  LocalConfig: "config.kubernetes.io/local-config",
  /** `detach`: when pruned, the object is left on the cluster and only un-managed. */
  LifecycleDeletion: "client.lifecycle.config.k8s.io/deletion",
  /** `ignore`: once the object exists, driftless never updates it. */
  LifecycleMutation: "client.lifecycle.config.k8s.io/mutation",
} as const;
export type UserAnnotation = (typeof UserAnnotation)[keyof typeof UserAnnotation];

export const LifecycleDeletionValue = { Detach: "detach" } as const;
export const LifecycleMutationValue = { Ignore: "ignore" } as const;
/** The only local-config value that does NOT mark an object local. */
export const LocalConfigFalse = "false" as const;

/** Annotations on a RootSync/RepoSync that steer how it is reconciled. */
export const SyncAnnotation = {
  /**
   * What happens to managed objects when the sync is deleted: `Foreground` deletes them first
   * (behind the reconciler finalizer), `Orphan` (the default) leaves them on the cluster.
   */
  DeletionPropagationPolicy: "configsync.gke.io/deletion-propagation-policy",
  /**
   * `"true"` lets the source become empty on purpose. Without it, a source that suddenly has no
   * objects while the inventory still lists some is refused (KNV2006) rather than pruning
   * everything, since an empty checkout is far more often a mistake (wrong dir, bad merge) than
   * an intent. Config Sync has no such switch; this one is driftless's own.
   */
  AllowEmptySource: "configsync.gke.io/allow-empty-source",
  /**
   * `"true"` pauses applying, pruning and drift correction; the reconciler keeps reading the source
   * and reports what differs. driftless's own (Config Sync has none): the incident switch Flux and
   * Argo CD users reach for.
   */
  Suspend: "driftless.dev/suspend",
  /**
   * Written by the reconciler on an OCI (or oci:// Helm) sync after each fetch: `<image>@sha256:<commit>`,
   * the exact artifact about to be synced, which signature-verification webhooks read (Config Sync's).
   */
  ImageToSync: "configsync.gke.io/image-to-sync",
  /**
   * A timestamp (RFC 3339) asking for a pass now, as Flux's `reconcile.fluxcd.io/requestedAt`: a change
   * brings a full pass at once (`driftless sync`, the console's "Sync now"). driftless's own.
   */
  SyncRequestedAt: "driftless.dev/sync-requested-at",
  /** Written by the reconciler after the status of a pass that began with the request: the value it answered. */
  SyncRequestHandled: "driftless.dev/sync-request-handled",
  /**
   * `"true"` or `"false"`, written by the reconciler in deployment mode: whether the sync directory holds
   * a kustomization. The manager gives the pod its render container (hydration-controller) only when
   * `"true"` (absent means `"false"`, as in Config Sync). It toggles that container and nothing else.
   */
  RequiresRendering: "configsync.gke.io/requires-rendering",
  /**
   * `"true"` or `"false"`, written by a RootSync's reconciler after each read of its source: whether it holds a
   * NamespaceSelector in `mode: dynamic` (Config Sync's; its manager reads it to give the reconciler a watch of
   * Namespaces, which driftless's reconciler opens by itself).
   */
  DynamicNsSelectorEnabled: "configsync.gke.io/dynamic-ns-selector-enabled",
} as const;
export type SyncAnnotation = (typeof SyncAnnotation)[keyof typeof SyncAnnotation];

export const DeletionPropagationPolicy = {
  Foreground: "Foreground",
  Orphan: "Orphan",
} as const;
export type DeletionPropagationPolicy = (typeof DeletionPropagationPolicy)[keyof typeof DeletionPropagationPolicy];
export const DefaultDeletionPropagationPolicy = DeletionPropagationPolicy.Orphan;

/** Labels on objects that belong to a sync's machinery (ResourceGroup, reconciler workload, RBAC). */
export const SyncLabel = {
  SyncKind: "configsync.gke.io/sync-kind",
  SyncName: "configsync.gke.io/sync-name",
  SyncNamespace: "configsync.gke.io/sync-namespace",
  /** On reconciler pods: the reconciler name. */
  Reconciler: "configsync.gke.io/reconciler",
  /** On reconciler pods: the Deployment name, for `kubectl logs -l`. */
  DeploymentName: "configsync.gke.io/deployment-name",
} as const;

/** Label on the ResourceGroup whose value is the inventory id `<ns>_<name>` (cli-utils convention). */
export const InventoryIdLabel = "cli-utils.sigs.k8s.io/inventory-id" as const;

/** Annotation on the ResourceGroup: `enabled` asks for per-object status in status.resourceStatuses. */
export const ResourceGroupStatusModeAnnotation = "configsync.gke.io/status" as const;
export const StatusMode = {
  Enabled: "enabled",
  Disabled: "disabled",
} as const;
export type StatusMode = (typeof StatusMode)[keyof typeof StatusMode];

/** Reads the deletion propagation policy; absent or unknown values mean the default, Orphan. */
export function deletionPropagationPolicyOf(
  annotations: Readonly<Record<string, string>> | undefined,
): DeletionPropagationPolicy {
  const value = annotations?.[SyncAnnotation.DeletionPropagationPolicy];
  return value === DeletionPropagationPolicy.Foreground
    ? DeletionPropagationPolicy.Foreground
    : DefaultDeletionPropagationPolicy;
}

/** True when the sync opts in to an intentionally empty source. */
export function allowsEmptySource(annotations: Readonly<Record<string, string>> | undefined): boolean {
  return annotations?.[SyncAnnotation.AllowEmptySource] === "true";
}

/** True when the sync is suspended (`driftless.dev/suspend: "true"`). */
export function isSuspended(annotations: Readonly<Record<string, string>> | undefined): boolean {
  return annotations?.[SyncAnnotation.Suspend] === "true";
}

/** True when the reconciler found that the sync's source needs rendering (`configsync.gke.io/requires-rendering`). */
export function requiresRendering(annotations: Readonly<Record<string, string>> | undefined): boolean {
  return annotations?.[SyncAnnotation.RequiresRendering] === "true";
}

/** The sync's request for a pass (`driftless.dev/sync-requested-at`) when no finished pass has answered it yet. */
export function pendingSyncRequest(annotations: Readonly<Record<string, string>> | undefined): string | undefined {
  const requested = annotations?.[SyncAnnotation.SyncRequestedAt];
  if (requested === undefined || requested === "") return undefined;
  return requested === annotations?.[SyncAnnotation.SyncRequestHandled] ? undefined : requested;
}

/** True when `config.kubernetes.io/local-config` keeps the object out of the cluster. */
export function isLocalConfig(annotations: Readonly<Record<string, string>> | undefined): boolean {
  const value = annotations?.[UserAnnotation.LocalConfig];
  return value !== undefined && value !== LocalConfigFalse;
}
