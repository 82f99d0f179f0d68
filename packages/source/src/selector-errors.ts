/** Errors of Config Sync's ClusterSelectors and NamespaceSelectors, with Config Sync's codes. All terminal. */
import { ErrorClass, KnvCode } from "@driftless/api";
import { SourceError } from "./errors.ts";
import type { SourceErrorDetails } from "./errors.ts";

/** A selector annotation where it may not be (KNV1004): on a selector or Cluster, or a namespace selector on a cluster-scoped object. */
export class IllegalSelectorAnnotationError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(KnvCode.IllegalSelectorAnnotation, ErrorClass.Terminal, message, details);
  }
}

/** A selector annotation naming no declared selector, or (hierarchy) one outside the object's directory and its parents (KNV1013). */
export class UnknownSelectorError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(KnvCode.ObjectHasUnknownSelector, ErrorClass.Terminal, message, details);
  }
}

/** An empty or invalid `spec.selector`, or a `spec.mode` not accepted here (KNV1014). */
export class InvalidSelectorError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(KnvCode.InvalidSelector, ErrorClass.Terminal, message, details);
  }
}

/** Both `configmanagement.gke.io/cluster-selector` and `configsync.gke.io/cluster-name-selector` (KNV1066). */
export class SelectorAnnotationConflictError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(KnvCode.ClusterSelectorAnnotationConflict, ErrorClass.Terminal, message, details);
  }
}

/** A namespaced object declaring both metadata.namespace and a namespace selector (KNV1053, as Config Sync). */
export class NamespaceAndSelectorError extends SourceError {
  constructor(message: string, details: SourceErrorDetails = {}) {
    super(KnvCode.MissingNamespaceOnNamespaced, ErrorClass.Terminal, message, details);
  }
}
