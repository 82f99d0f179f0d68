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

/** Config Sync error codes (KNVxxxx) used by driftless. */
export const KnvCode = {
  /** A manifest could not be parsed (invalid YAML/JSON, not an object). */
  ObjectParse: "KNV1006",
  /** The kind is not served by the API server (after discovery). */
  UnknownObjectKind: "KNV1021",
  /** Two objects in the source have the same group, kind, namespace and name. */
  MetadataNameCollision: "KNV1029",
  /** An object has no metadata.name. */
  MissingObjectName: "KNV1031",
  /** metadata.name is not a valid Kubernetes name. */
  InvalidMetadataName: "KNV1036",
  /** An object in a RepoSync's source is cluster-scoped or in another namespace. */
  BadScope: "KNV1058",
  /** The object is managed by another sync; it is not taken over. */
  ManagementConflict: "KNV1060",
  /** The RootSync/RepoSync spec is invalid. */
  InvalidSync: "KNV1061",
  /** An object is missing apiVersion or kind, or a field has an illegal value. */
  IllegalField: "KNV1045",
  /** depends-on forms a cycle. */
  CyclicDependency: "KNV1063",
  /** The API server answered with an error that is not about one object. */
  ApiServer: "KNV2002",
  /** The source could not be fetched (unreachable repo, bad credentials, unknown branch or revision). */
  SourceFetch: "KNV2004",
  /** Another writer keeps changing a managed object. */
  Fight: "KNV2005",
  /** The source became empty while objects are managed; refusing to delete them all. */
  EmptySource: "KNV2006",
  /** Applying an object failed. */
  Apply: "KNV2009",
  /** The reconciler lacks permission for an object. */
  InsufficientPermission: "KNV2013",
  /** Anything unexpected: a bug, reported with its cause. */
  Internal: "KNV9998",
} as const;
export type KnvCode = (typeof KnvCode)[keyof typeof KnvCode];

/** The object an error is about, as Config Sync reports it in `errorResources[]`. */
export interface ErrorResource {
  readonly group: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
  /** Path of the file in the source that declared it, relative to spec.git.dir. */
  readonly sourcePath?: string;
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
