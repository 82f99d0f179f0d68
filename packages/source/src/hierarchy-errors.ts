/**
 * Errors only a hierarchical source (`sourceFormat: hierarchy`) can have: one class per rule, each
 * with Config Sync's code and the files or directories it concerns. All are terminal: the repository
 * layout must change.
 */
import { ErrorClass, KnvCode } from "@driftless/api";
import { SourceError } from "./errors.ts";
import type { SourceErrorDetails } from "./errors.ts";

/** A Namespace directory has subdirectories (KNV1003). */
export class IllegalNamespaceSubdirectoryError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(KnvCode.IllegalNamespaceSubdirectory, ErrorClass.Terminal, message, details);
  }
}

/** An abstract namespace directory declares a kind its HierarchyConfig sets to `hierarchyMode: none` (KNV1007). */
export class IllegalAbstractNamespaceObjectKindError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(KnvCode.IllegalAbstractNamespaceObjectKind, ErrorClass.Terminal, message, details);
  }
}

/** metadata.namespace names another namespace than the directory holding the object (KNV1009). */
export class IllegalNamespaceDeclarationError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(KnvCode.IllegalMetadataNamespaceDeclaration, ErrorClass.Terminal, message, details);
  }
}

/** `system/` declares no Repo (KNV1017). */
export class MissingRepoError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(KnvCode.MissingRepo, ErrorClass.Terminal, message, details);
  }
}

/** A Namespace declared directly in `namespaces/` instead of a subdirectory of its own (KNV1019). */
export class IllegalTopLevelNamespaceError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(KnvCode.IllegalTopLevelNamespace, ErrorClass.Terminal, message, details);
  }
}

/** A Namespace whose name is not the name of its directory (KNV1020). */
export class NamespaceDirectoryMismatchError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(KnvCode.InvalidNamespaceDirectoryName, ErrorClass.Terminal, message, details);
  }
}

/** The Repo's spec.version is not 1.0.0 (or the older 0.1.0) (KNV1027). */
export class UnsupportedRepoVersionError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(KnvCode.UnsupportedRepoSpecVersion, ErrorClass.Terminal, message, details);
  }
}

/** Repo or HierarchyConfig in an unstructured source (KNV1032). */
export class IllegalHierarchicalKindError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(KnvCode.IllegalHierarchicalKind, ErrorClass.Terminal, message, details);
  }
}

/** Both formats refuse Config Sync's controller Namespaces (KNV1034); the class lives with the shared errors. */
export { IllegalNamespaceError } from "./errors.ts";

/** A NamespaceSelector in a Namespace directory (KNV1038). */
export class IllegalKindInNamespacesError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(KnvCode.IllegalKindInNamespaces, ErrorClass.Terminal, message, details);
  }
}

/** An object under the wrong top-level directory (KNV1039). */
export class IncorrectTopLevelDirectoryError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(KnvCode.IncorrectTopLevelDirectory, ErrorClass.Terminal, message, details);
  }
}

/** A HierarchyConfig names Namespace, a Config Sync kind, or a group without kinds (KNV1041). */
export class UnsupportedHierarchyConfigResourceError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(KnvCode.UnsupportedResourceInHierarchyConfig, ErrorClass.Terminal, message, details);
  }
}

/** A HierarchyConfig's hierarchyMode is neither `inherit` nor `none` (KNV1042). */
export class IllegalHierarchyModeError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(KnvCode.IllegalHierarchyMode, ErrorClass.Terminal, message, details);
  }
}

/** Objects in a directory that has no Namespace and no Namespace directory below it (KNV1044). */
export class UnsyncableResourcesError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(KnvCode.UnsyncableResources, ErrorClass.Terminal, message, details);
  }
}

/** A HierarchyConfig names a kind declared in `cluster/` (KNV1046). */
export class ClusterScopedHierarchyConfigError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(KnvCode.ClusterScopedResourceInHierarchyConfig, ErrorClass.Terminal, message, details);
  }
}

/** A declared label ends in `.tree.hnc.x-k8s.io/depth`, which Config Sync writes itself (KNV1057). */
export class IllegalDepthLabelError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(KnvCode.IllegalDepthLabel, ErrorClass.Terminal, message, details);
  }
}

/** Two Repos, or two Namespaces in one directory (KNV2012). */
export class MultipleSingletonsError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(KnvCode.MultipleSingletons, ErrorClass.Terminal, message, details);
  }
}
