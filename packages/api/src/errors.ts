/**
 * The error model every driftless package shares.
 *
 * Every failure is classified so the caller knows what to do with it:
 * - `retry`: transient (timeouts, 409, 429, 5xx, Redis down); retried with backoff.
 * - `terminal`: configuration the user must fix (bad YAML, unknown kind, invalid spec); reported on
 *   status and not retried in a hot loop.
 * - `stalled`: cannot make progress until something else changes (a missing CRD, a namespace that
 *   is terminating); re-evaluated when the world changes.
 *
 * Codes follow Config Sync's KNV numbering where Config Sync has one, so that runbooks and alerts
 * written for Config Sync keep working.
 */

export const ErrorClass = {
  Retry: "retry",
  Terminal: "terminal",
  Stalled: "stalled",
} as const;
export type ErrorClass = (typeof ErrorClass)[keyof typeof ErrorClass];

/**
 * Config Sync error codes (KNVxxxx) used by driftless. Numbers are Config Sync's own (its error
 * registry, cmd/nomoserrors/examples/examples.go): 1xxx = the source needs fixing, 2xxx = something
 * on the cluster went wrong, 9xxx = a bug. Retired Config Sync numbers (e.g. 1063) are never reused.
 */
export const KnvCode = {
  /** Hierarchy: a Namespace directory has subdirectories. */
  IllegalNamespaceSubdirectory: "KNV1003",
  /** A Cluster, ClusterSelector or NamespaceSelector carries a selector annotation, or a cluster-scoped object a namespace selector. */
  IllegalSelectorAnnotation: "KNV1004",
  /** The `configmanagement.gke.io/managed` annotation has a value other than enabled/disabled. */
  IllegalManagementAnnotation: "KNV1005",
  /** A manifest could not be parsed (invalid YAML/JSON, not an object, wrong field types). */
  ObjectParse: "KNV1006",
  /** Hierarchy: an abstract namespace directory declares a kind its HierarchyConfig sets to mode `none`. */
  IllegalAbstractNamespaceObjectKind: "KNV1007",
  /** Hierarchy: metadata.namespace does not match the directory the object is in. */
  IllegalMetadataNamespaceDeclaration: "KNV1009",
  /** The source declares an annotation in a prefix reserved for Config Sync/driftless. */
  IllegalAnnotationDefinition: "KNV1010",
  /** The source declares a label in a prefix reserved for Config Sync/driftless. */
  IllegalLabelDefinition: "KNV1011",
  /** A selector annotation names no declared selector (or, in a hierarchy, one outside the object's directory and its parents). */
  ObjectHasUnknownSelector: "KNV1013",
  /** A ClusterSelector or NamespaceSelector is empty, invalid, or has a mode Config Sync does not accept here. */
  InvalidSelector: "KNV1014",
  /** Hierarchy: `system/` declares no Repo. */
  MissingRepo: "KNV1017",
  /** Hierarchy: a Namespace is declared directly in `namespaces/`. */
  IllegalTopLevelNamespace: "KNV1019",
  /** Hierarchy: a Namespace's name does not match its directory. */
  InvalidNamespaceDirectoryName: "KNV1020",
  /** The kind is not served by the API server (after discovery). */
  UnknownObjectKind: "KNV1021",
  /** Hierarchy: the Repo's spec.version is not one Config Sync supports. */
  UnsupportedRepoSpecVersion: "KNV1027",
  /** Two objects in the source have the same group, kind, namespace and name. */
  MetadataNameCollision: "KNV1029",
  /** An object has no metadata.name. */
  MissingObjectName: "KNV1031",
  /** An unstructured source declares a kind only hierarchical sources have (Repo, HierarchyConfig). */
  IllegalHierarchicalKind: "KNV1032",
  /** The source declares the config-management-system namespace or objects in it. */
  IllegalNamespace: "KNV1034",
  /** metadata.name is not a valid Kubernetes name. */
  InvalidMetadataName: "KNV1036",
  /** Hierarchy: a kind that may not be declared where it is (a NamespaceSelector in a Namespace directory). */
  IllegalKindInNamespaces: "KNV1038",
  /** Hierarchy: an object is under the wrong top-level directory (system/, cluster/, clusterregistry/, namespaces/). */
  IncorrectTopLevelDirectory: "KNV1039",
  /** Hierarchy: a HierarchyConfig names a kind that may not be configured (Namespace, Config Sync's own kinds). */
  UnsupportedResourceInHierarchyConfig: "KNV1041",
  /** Hierarchy: a HierarchyConfig uses a hierarchyMode other than `inherit` or `none`. */
  IllegalHierarchyMode: "KNV1042",
  /** A kind of Config Sync's own a source may not declare: `Sync`, or a CRD in Config Sync's API groups. */
  UnsupportedObject: "KNV1043",
  /** Hierarchy: objects in a directory that neither is nor contains a Namespace directory. */
  UnsyncableResources: "KNV1044",
  /** An object declares a field a source must not set (status, ownerReferences, resourceVersion, ...). */
  IllegalField: "KNV1045",
  /** Hierarchy: a HierarchyConfig names a cluster-scoped kind. */
  ClusterScopedResourceInHierarchyConfig: "KNV1046",
  /** A CRD would be removed while objects of its kind are still declared. */
  UnsupportedCrdRemoval: "KNV1047",
  /** A CustomResourceDefinition's metadata.name is not `<spec.names.plural>.<spec.group>`. */
  InvalidCrdName: "KNV1048",
  /** An object uses a retired group for its kind (e.g. `extensions` for Deployment or Ingress). */
  DeprecatedGroupKind: "KNV1050",
  /** A cluster-scoped object declares metadata.namespace. */
  IllegalNamespaceOnClusterScoped: "KNV1052",
  /** A namespaced object has no metadata.namespace (and none can be inferred). */
  MissingNamespaceOnNamespaced: "KNV1053",
  /** metadata.namespace is not a valid namespace name. */
  InvalidNamespaceName: "KNV1055",
  /** An annotation value is not a string, or not a value the annotation accepts (e.g. depends-on). */
  InvalidAnnotationValue: "KNV1054",
  /** A managed object is declared in a Namespace the source declares with `configmanagement.gke.io/managed: disabled`. */
  ManagedResourceInUnmanagedNamespace: "KNV1056",
  /** A label ending in `.tree.hnc.x-k8s.io/depth` is declared (Config Sync writes those on hierarchy Namespaces). */
  IllegalDepthLabel: "KNV1057",
  /** An object in a RepoSync's source is cluster-scoped or in another namespace. */
  BadScope: "KNV1058",
  /** The object is managed by another sync; it is not taken over. */
  ManagementConflict: "KNV1060",
  /** The RootSync/RepoSync spec is invalid. */
  InvalidSync: "KNV1061",
  /** A CustomResourceDefinition in the source does not read as one: a known field holds the wrong JSON type. */
  MalformedCrd: "KNV1065",
  /** An object carries both cluster-selector annotations. */
  ClusterSelectorAnnotationConflict: "KNV1066",
  /** kustomize (or helm through it) failed to render the sync directory; the message carries the tool's output. */
  Rendering: "KNV1068",
  /** A RootSync/RepoSync declares itself in its own source. */
  SelfReconcile: "KNV1069",
  /** The source declares more objects than the reconciler accepts. */
  MaxObjectCount: "KNV1070",
  /** The API server answered with an error that is not about one object. */
  ApiServer: "KNV2002",
  /** Reading the checked-out files failed (filesystem error). */
  Filesystem: "KNV2003",
  /** The source could not be fetched (unreachable repo, bad credentials, unknown branch or revision). */
  SourceFetch: "KNV2004",
  /** Another writer keeps changing a managed object. */
  Fight: "KNV2005",
  /** The source became empty while objects are managed; refusing to delete them all. */
  EmptySource: "KNV2006",
  /** Create or update lost a race (already exists, conflict, gone). */
  ResourceConflict: "KNV2008",
  /** Applying, pruning or waiting for an object failed. */
  Apply: "KNV2009",
  /**
   * depends-on forms a cycle. Config Sync has no dedicated code: cycles surface from its applier,
   * whose errors are KNV2009. (KNV1063 is a retired Config Sync number and must not be reused.)
   */
  CyclicDependency: "KNV2009",
  /** Something went wrong with one object that has no finer code. */
  Resource: "KNV2010",
  /** An object expected on the cluster was not found. */
  MissingResource: "KNV2011",
  /** More than one of a kind there may be only one of (a Repo; a Namespace in one hierarchy directory). */
  MultipleSingletons: "KNV2012",
  /** The reconciler lacks permission for an object. */
  InsufficientPermission: "KNV2013",
  /** A transient failure expected to clear on retry. */
  Transient: "KNV2016",
  /** Anything unexpected: a bug, reported with its cause. */
  Internal: "KNV9998",
  /** An error with no documented code yet. */
  Undocumented: "KNV9999",
} as const;
export type KnvCode = (typeof KnvCode)[keyof typeof KnvCode];

/** The object an error is about, as Config Sync reports it in `errorResources[]`. */
export interface ErrorResource {
  readonly group: string;
  /** The version the object was declared or read with, when known. */
  readonly version?: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
  /** Path of the file in the source that declared it, relative to spec.git.dir. */
  readonly sourcePath?: string;
  /** `sourcePath` is from the repository root already: read off the live object another sync declares. */
  readonly sourcePathRooted?: boolean;
}

export interface DriftlessErrorOptions {
  readonly code: KnvCode;
  readonly errorClass: ErrorClass;
  readonly message: string;
  readonly resources?: readonly ErrorResource[];
  readonly cause?: unknown;
}

/** Base of every classified error; subclasses name one failure mode each. */
export class DriftlessError extends Error {
  readonly code: KnvCode;
  readonly errorClass: ErrorClass;
  readonly resources: readonly ErrorResource[];

  constructor(options: DriftlessErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code;
    this.errorClass = options.errorClass;
    this.resources = options.resources ?? [];
  }

  get retryable(): boolean {
    return this.errorClass === ErrorClass.Retry;
  }
}

/** Wraps anything thrown into a DriftlessError, keeping classified errors as they are. */
export function toDriftlessError(error: unknown, fallbackCode: KnvCode = KnvCode.Internal): DriftlessError {
  if (error instanceof DriftlessError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new DriftlessError({ code: fallbackCode, errorClass: ErrorClass.Retry, message, cause: error });
}
