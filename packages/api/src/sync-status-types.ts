/**
 * The status of a RootSync/RepoSync, field for field as Config Sync writes it, so `nomos status`,
 * dashboards and alerts built on Config Sync read driftless's status unchanged.
 */

export interface GitStatus {
  readonly repo: string;
  readonly revision: string;
  readonly branch: string;
  readonly dir: string;
}

export interface OciStatus {
  readonly image: string;
  readonly dir: string;
}

export interface HelmStatus {
  readonly repo: string;
  readonly chart: string;
  readonly version: string;
}

/** Group, version and kind of an object named in an error. All three are always written, possibly "". */
export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/** An object an error is about (`errorResources[]`). */
export interface ResourceRef {
  /** Slash path of the declaring file, relative to the sync directory. */
  readonly sourcePath?: string;
  readonly name?: string;
  readonly namespace?: string;
  readonly gvk: GroupVersionKind;
}

export interface ConfigSyncError {
  /** The number without the KNV prefix, e.g. "2009". */
  readonly code: string;
  /** `KNVxxxx: <message>`. */
  readonly errorMessage: string;
  readonly errorResources?: readonly ResourceRef[];
}

export interface ErrorSummary {
  /** How many errors there were. */
  readonly totalCount?: number;
  /** True when `errors` holds fewer than totalCount. */
  readonly truncated?: boolean;
  /** How many errors `errors` holds. */
  readonly errorCountAfterTruncation?: number;
}

interface PhaseStatus {
  readonly gitStatus?: GitStatus;
  readonly ociStatus?: OciStatus;
  readonly helmStatus?: HelmStatus;
  /** The commit (or image digest) this phase last worked on. */
  readonly commit?: string;
  /** RFC 3339 time of the last update of this phase. */
  readonly lastUpdate?: string | null;
  readonly errors?: readonly ConfigSyncError[];
  readonly errorSummary?: ErrorSummary;
}

/** status.source: fetching and reading the source of truth. */
export type SourceStatus = PhaseStatus;

/** status.rendering: kustomize/helm rendering of the fetched source. */
export interface RenderingStatus extends PhaseStatus {
  readonly message?: string;
}

/** status.sync: applying to the cluster. */
export type SyncStatus = PhaseStatus;

/** Where the errors counted by a Syncing condition live. */
export const ErrorSourceRef = {
  Rendering: "status.rendering.errors",
  Source: "status.source.errors",
  Sync: "status.sync.errors",
} as const;
export type ErrorSourceRef = (typeof ErrorSourceRef)[keyof typeof ErrorSourceRef];

export const ConditionStatus = {
  True: "True",
  False: "False",
  Unknown: "Unknown",
} as const;
export type ConditionStatus = (typeof ConditionStatus)[keyof typeof ConditionStatus];

export interface SyncCondition {
  /** A `SyncConditionType` (other types written by other tools are kept). */
  readonly type: string;
  readonly status: ConditionStatus;
  readonly lastUpdateTime?: string | null;
  readonly lastTransitionTime?: string | null;
  readonly reason?: string;
  readonly message?: string;
  /** The commit the condition is about (Syncing). */
  readonly commit?: string;
  /** Errors carried by Reconciling/Stalled/ReconcilerFinalizerFailure conditions. */
  readonly errors?: readonly ConfigSyncError[];
  /** For Syncing: which status fields hold the errors, so they are not written twice. */
  readonly errorSourceRefs?: readonly ErrorSourceRef[];
  readonly errorSummary?: ErrorSummary;
}

export interface SyncStatusFields {
  readonly observedGeneration?: number;
  /** Name of the reconciler serving this sync. */
  readonly reconciler?: string;
  /** The last commit fully synced without errors. */
  readonly lastSyncedCommit?: string;
  readonly source?: SourceStatus;
  readonly rendering?: RenderingStatus;
  readonly sync?: SyncStatus;
  readonly conditions?: readonly SyncCondition[];
}

export type RootSyncStatus = SyncStatusFields;
export type RepoSyncStatus = SyncStatusFields;
