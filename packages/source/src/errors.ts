/**
 * One error class per way a source can be wrong. Each carries a Config Sync code, the files it
 * concerns (relative to the sync's dir, posix) and, when the object is known, the resource.
 */
import { DriftlessError, ErrorClass } from "@driftless/api";
import type { ErrorResource, KnvCode } from "@driftless/api";

/**
 * The codes used here, by value: they are Config Sync's numbers (facts, verified against its source),
 * and `satisfies` makes the build fail if @driftless/api stops listing one.
 */
const Code = {
  IllegalManagementAnnotation: "KNV1005",
  ObjectParse: "KNV1006",
  IllegalAnnotationDefinition: "KNV1010",
  IllegalLabelDefinition: "KNV1011",
  UnknownObjectKind: "KNV1021",
  MetadataNameCollision: "KNV1029",
  MissingObjectName: "KNV1031",
  IllegalNamespace: "KNV1034",
  InvalidMetadataName: "KNV1036",
  UnsupportedObject: "KNV1043",
  IllegalField: "KNV1045",
  InvalidCrdName: "KNV1048",
  DeprecatedGroupKind: "KNV1050",
  IllegalNamespaceOnClusterScoped: "KNV1052",
  InvalidAnnotationValue: "KNV1054",
  InvalidNamespaceName: "KNV1055",
  ManagedResourceInUnmanagedNamespace: "KNV1056",
  BadScope: "KNV1058",
  MalformedCrd: "KNV1065",
  MaxObjectCount: "KNV1070",
  Filesystem: "KNV2003",
  SourceFetch: "KNV2004",
} as const satisfies Record<string, KnvCode>;

export interface SourceErrorDetails {
  /** Files the error is about; defaults to the sourcePaths of `resources`. */
  readonly sourcePaths?: readonly string[];
  readonly resources?: readonly ErrorResource[];
  readonly cause?: unknown;
}

/** Base of every error found while reading a source. */
export class SourceError extends DriftlessError {
  readonly sourcePaths: readonly string[];

  constructor(code: KnvCode, errorClass: ErrorClass, message: string, details: SourceErrorDetails = {}) {
    super({ code, errorClass, message, resources: details.resources ?? [], cause: details.cause });
    this.sourcePaths = details.sourcePaths ?? [
      ...new Set((details.resources ?? []).flatMap((r) => (r.sourcePath ? [r.sourcePath] : []))),
    ];
  }
}

/**
 * spec.git.dir does not exist or is not a directory. Terminal: the sync's configuration or the
 * repository layout must change.
 */
export class SourceDirectoryError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.SourceFetch, ErrorClass.Terminal, message, details);
  }
}

/**
 * A file or directory could not be read (I/O error, file replaced mid-read). Retried: the next
 * checkout usually reads cleanly.
 */
export class SourceReadError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.Filesystem, ErrorClass.Retry, message, details);
  }
}

/**
 * A symlink points outside the source directory, or nowhere. Never followed, because it could expose
 * the reconciler's own files (tokens, keys); reported rather than skipped, because skipping would
 * silently drop objects and prune them.
 */
export class UnsafeSymlinkError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.Filesystem, ErrorClass.Terminal, message, details);
  }
}

/** Invalid YAML or JSON, or a document that is not a mapping (KNV1006). */
export class ManifestParseError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.ObjectParse, ErrorClass.Terminal, message, details);
  }
}

/**
 * One of Config Sync's own kinds (a ClusterSelector or NamespaceSelector, a Repo, a HierarchyConfig) holds a
 * value of the wrong type (a number where a string goes, a string for a list): Config Sync cannot decode it
 * into its Go type and says so with KNV1006, before any rule of that kind.
 */
export class UnparsableConfigError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.ObjectParse, ErrorClass.Terminal, message, details);
  }
}

/**
 * A file is over a bound in `SourceLimits`: nesting depth, or what its YAML aliases expand to. KNV1006
 * like invalid YAML: the file cannot be read into objects and must change. (Config Sync wraps go-yaml's
 * own alias and depth errors in its generic path error, KNV2001, outside driftless's 1xxx range for
 * sources.)
 */
export class ManifestLimitError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.ObjectParse, ErrorClass.Terminal, message, details);
  }
}

/**
 * apiVersion or kind is missing or malformed: the document is not a Kubernetes object. (Config Sync
 * reports a missing kind as a decode error of the file and a missing apiVersion as KNV2010.)
 */
export class InvalidTypeError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.ObjectParse, ErrorClass.Terminal, message, details);
  }
}

/** metadata.name is missing, including objects that only set metadata.generateName (KNV1031). */
export class MissingNameError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.MissingObjectName, ErrorClass.Terminal, message, details);
  }
}

/** metadata.name is not a valid Kubernetes name for its kind (KNV1036). */
export class InvalidNameError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.InvalidMetadataName, ErrorClass.Terminal, message, details);
  }
}

/** metadata.namespace, or a Namespace's own name, is not a valid Namespace name: a DNS-1123 label (KNV1055). */
export class InvalidNamespaceNameError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.InvalidNamespaceName, ErrorClass.Terminal, message, details);
  }
}

/** A field only the API server may set (status, uid, resourceVersion, ownerReferences, ...; KNV1045). */
export class IllegalFieldError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.IllegalField, ErrorClass.Terminal, message, details);
  }
}

/** A cluster-scoped object declares metadata.namespace (KNV1052). */
export class NamespaceOnClusterScopedError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.IllegalNamespaceOnClusterScoped, ErrorClass.Terminal, message, details);
  }
}

/**
 * A malformed `config.kubernetes.io/depends-on` value (KNV1054, invalid annotation value). Config Sync
 * only notices at apply time, when cli-utils rejects the whole apply set and it reports KNV2009;
 * catching it while reading names the file and applies nothing.
 */
export class InvalidDependsOnError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.InvalidAnnotationValue, ErrorClass.Terminal, message, details);
  }
}

/**
 * At read time, no built-in type, served CRD or CRD in the source defines this kind (KNV1021); the apply's
 * counterpart is the applier's UnknownKindAtApplyError. Stalled, not terminal:
 * it resolves itself once the CRD is installed, as in Config Sync, which retries until then.
 */
export class UnknownKindAtReadError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.UnknownObjectKind, ErrorClass.Stalled, message, details);
  }
}

/**
 * A kind of Config Sync's own that no source may declare (KNV1043): `Sync`, which only Config Sync's
 * importer wrote, or a CRD in one of its API groups, which would redefine the reconciler's own types.
 */
export class UnsupportedObjectError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.UnsupportedObject, ErrorClass.Terminal, message, details);
  }
}

/** Label or annotation values that are not strings, e.g. an unquoted `true` or `8080` (KNV1054). */
export class InvalidAnnotationValueError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.InvalidAnnotationValue, ErrorClass.Terminal, message, details);
  }
}

/** `configmanagement.gke.io/managed` declared with a value other than "disabled" (KNV1005). */
export class IllegalManagementAnnotationError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.IllegalManagementAnnotation, ErrorClass.Terminal, message, details);
  }
}

/**
 * An annotation in a prefix reserved for the reconciler (`configmanagement.gke.io/`, `configsync.gke.io/`)
 * that users may not declare (KNV1010).
 */
export class IllegalAnnotationError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.IllegalAnnotationDefinition, ErrorClass.Terminal, message, details);
  }
}

/** A label in a prefix reserved for the reconciler (KNV1011). */
export class IllegalLabelError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.IllegalLabelDefinition, ErrorClass.Terminal, message, details);
  }
}

/** A RepoSync's source declares a cluster-scoped object or one in another namespace (KNV1058). */
export class BadScopeError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.BadScope, ErrorClass.Terminal, message, details);
  }
}

/** Two manifests declare the same group, kind, namespace and name (KNV1029). */
export class DuplicateObjectError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.MetadataNameCollision, ErrorClass.Terminal, message, details);
  }
}

/**
 * A Namespace Config Sync's own controllers run in is declared (KNV1034): config-management-system,
 * resource-group-system, config-management-monitoring. Managing it (and pruning it later) would take
 * the reconciler's own home away.
 */
export class IllegalNamespaceError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.IllegalNamespace, ErrorClass.Terminal, message, details);
  }
}

/**
 * A CustomResourceDefinition that does not convert to the typed CRD (KNV1065): a known field holds the
 * wrong JSON type. Reported instead of its name or group rules, as Config Sync does.
 */
export class MalformedCrdError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.MalformedCrd, ErrorClass.Terminal, message, details);
  }
}

/**
 * A CustomResourceDefinition whose metadata.name is not `<spec.names.plural>.<spec.group>` (KNV1048),
 * the only name the API server accepts for it.
 */
export class InvalidCrdNameError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.InvalidCrdName, ErrorClass.Terminal, message, details);
  }
}

/**
 * A kind declared in a group it has left, such as `extensions` Deployments or Ingresses (KNV1050).
 * Current API servers no longer serve those versions.
 */
export class DeprecatedGroupKindError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.DeprecatedGroupKind, ErrorClass.Terminal, message, details);
  }
}

/**
 * Managed objects declared in a Namespace that the source itself declares with
 * `configmanagement.gke.io/managed: disabled` (KNV1056): the reconciler would have to manage them in a
 * Namespace it was told to leave alone. One error per such Namespace, listing its managed objects.
 */
export class ManagedResourceInUnmanagedNamespaceError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(Code.ManagedResourceInUnmanagedNamespace, ErrorClass.Terminal, message, details);
  }
}

/**
 * More objects for one cluster than `vet --threshold` allows (KNV1070, nomos's check; the reconciler
 * has no such limit). Large inventories are where a ResourceGroup nears etcd's object size limit.
 */
export class ObjectCountError extends SourceError {
  constructor(found: number, max: number) {
    super(
      Code.MaxObjectCount,
      ErrorClass.Terminal,
      `the source declares ${found} objects, more than the ${max} allowed (--threshold): a ResourceGroup that ` +
        `lists this many objects nears etcd's object size limit, so split the objects across several syncs`,
    );
  }
}
