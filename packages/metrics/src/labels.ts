/**
 * Label values. Every label has a closed set of values (or one value per process, like the
 * reconciler's name), so no series is ever created per object, commit history or error message:
 * cardinality stays bounded however large the synced repository grows.
 *
 * Values follow Config Sync's (pkg/metrics/tagkeys.go) where it has them, so its dashboards and
 * alerts work unchanged.
 */

/** `status`: the outcome of the measured step. */
export const Status = { Success: "success", Error: "error" } as const;
export type Status = (typeof Status)[keyof typeof Status];

const writeVerbs = { Create: "create", Update: "update", Patch: "patch", Delete: "delete" } as const;

/** `operation` of apply_operations_total; `unmanage`: an object left in place, released (detach), as Config Sync's applier records it. */
export const Operation = { ...writeVerbs, Unmanage: "unmanage" } as const;
export type Operation = (typeof Operation)[keyof typeof Operation];

/** `operation` of api_duration_seconds: any API server verb driftless uses. */
export const ApiOperation = {
  ...writeVerbs,
  Get: "get",
  List: "list",
  Watch: "watch",
  DeleteCollection: "deletecollection",
} as const;
export type ApiOperation = (typeof ApiOperation)[keyof typeof ApiOperation];

/** `controller`: who applied (the pass) or re-applied (the drift remediator). */
export const Controller = { Applier: "applier", Remediator: "remediator" } as const;
export type Controller = (typeof Controller)[keyof typeof Controller];

/** `component` of reconciler_errors: the stage whose status errors are counted. */
export const ErrorComponent = { Parsing: "parsing", Source: "source", Rendering: "rendering", Sync: "sync" } as const;
export type ErrorComponent = (typeof ErrorComponent)[keyof typeof ErrorComponent];

/** `errorclass` of reconciler_errors: the KNV code family (1xxx source, 2xxx cluster, 9xxx internal). */
export const ErrorCodeClass = { Source: "1xxx", Cluster: "2xxx", Internal: "9xxx" } as const;
export type ErrorCodeClass = (typeof ErrorCodeClass)[keyof typeof ErrorCodeClass];

/** `component` of pipeline_error_observed. */
export const PipelineComponent = {
  Source: "source",
  Rendering: "rendering",
  Sync: "sync",
  Readiness: "readiness",
} as const;
export type PipelineComponent = (typeof PipelineComponent)[keyof typeof PipelineComponent];

/** `reconciler` of pipeline_error_observed: the kind of sync, as Config Sync spells it there. */
export const ReconcilerType = { RootSync: "root-sync", RepoSync: "repo-sync" } as const;
export type ReconcilerType = (typeof ReconcilerType)[keyof typeof ReconcilerType];

/** `trigger` of parser_duration_seconds: what started the pass (driftless's triggers). */
export const Trigger = {
  Poll: "poll",
  Webhook: "webhook",
  Drift: "drift",
  Manager: "manager",
  Startup: "startup",
  Retry: "retry",
} as const;
export type Trigger = (typeof Trigger)[keyof typeof Trigger];

/** `source` of parser_duration_seconds: the stage measured. */
export const ParserStage = { Read: "read", Parse: "parse", Update: "update" } as const;
export type ParserStage = (typeof ParserStage)[keyof typeof ParserStage];

/** `source` of internal_errors_total: where a defensive check fired (Config Sync's values; its applier has none). */
export const InternalErrorSource = {
  Parser: "parser",
  Differ: "differ",
  Remediator: "remediator",
  Queue: "queue",
  Manager: "manager",
} as const;
export type InternalErrorSource = (typeof InternalErrorSource)[keyof typeof InternalErrorSource];

/** `queue` of the driftless queue metrics: the queue's role, not its (per-sync) name. */
export const QueueLabel = { Sync: "sync", Manager: "manager" } as const;
export type QueueLabel = (typeof QueueLabel)[keyof typeof QueueLabel];

/** `result` of a job attempt: success, or the class of the error it failed with. */
export const JobResult = { Success: "success", Retry: "retry", Terminal: "terminal", Stalled: "stalled" } as const;
export type JobResult = (typeof JobResult)[keyof typeof JobResult];
export type JobFailure = Exclude<JobResult, "success">;

/** `state` of driftless_reconcilers (the manager's view of each reconciler it runs). */
export const ReconcilerState = {
  Starting: "starting",
  Running: "running",
  Failed: "failed",
  Terminating: "terminating",
} as const;
export type ReconcilerState = (typeof ReconcilerState)[keyof typeof ReconcilerState];

/** `reason` of driftless_finalizer_removals_total (finalizers the manager removes). */
export const FinalizerRemovalReason = {
  /** The manager tore down the reconciler workload (configsync.gke.io/reconciler-manager). */
  Teardown: "teardown",
  /** The manager stripped the reconciler finalizer because the namespace is terminating. */
  NamespaceTerminating: "namespace-terminating",
  /** The sync left the manager's --sync-selector: no reconciler of this manager runs for it any more. */
  LeftScope: "left-scope",
} as const;
export type FinalizerRemovalReason = (typeof FinalizerRemovalReason)[keyof typeof FinalizerRemovalReason];

/** `state` of driftless_queue_jobs: where a job not yet finished is (BullMQ's prioritized counts as waiting). */
export const QueueJobState = { Waiting: "waiting", Active: "active", Delayed: "delayed" } as const;
export type QueueJobState = (typeof QueueJobState)[keyof typeof QueueJobState];

/** `provider` of driftless_webhook_requests_total: who sent the request (from its event headers). */
export const WebhookProviderLabel = {
  GitHub: "github",
  GitLab: "gitlab",
  Generic: "generic",
  /** A container registry's notification (OCI syncs). */
  Registry: "registry",
} as const;
export type WebhookProviderLabel = (typeof WebhookProviderLabel)[keyof typeof WebhookProviderLabel];

/** `result` of driftless_webhook_requests_total: what became of one request. */
export const WebhookRequestResult = {
  /** A verified push that triggered at least one sync. */
  Matched: "matched",
  /** A verified push no sync follows (another repository or branch). */
  Unmatched: "unmatched",
  /** A verified event that is not a branch push (ping, tag, deleted branch). */
  Ignored: "ignored",
  /** Missing or wrong signature or token. */
  Unauthorized: "unauthorized",
  /** Verified, but not a payload driftless can read, or over the size limit. */
  Invalid: "invalid",
  /** Refused unread: too many requests in flight. */
  Busy: "busy",
  /** The body never arrived whole (read deadline, client gone). */
  Incomplete: "incomplete",
  /** A verified push that could not be queued (Redis unreachable). */
  Unavailable: "unavailable",
} as const;
export type WebhookRequestResult = (typeof WebhookRequestResult)[keyof typeof WebhookRequestResult];

/** The sync labels of a per-sync series the manager records (the reconciler's own default labels). */
export type SyncLabelSet = {
  configsync_sync_kind: "RootSync" | "RepoSync";
  configsync_sync_name: string;
  configsync_sync_namespace: string;
};

/** Config Sync's `commit` value when nothing has been synced yet. */
export const COMMIT_NONE = "NONE";
