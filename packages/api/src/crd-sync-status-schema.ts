/**
 * OpenAPI schema of RootSync/RepoSync `status`: everything the manager and reconciler write, in
 * Config Sync's layout. Status is not strictly validated on write, but fields missing here would
 * be pruned by the API server and silently vanish.
 */
import { arr, bool, int, int64, obj, str, time, type JsonSchemaProps } from "./crd-schema.ts";

const gitStatus = obj(
  "The Git source this status is about.",
  {
    repo: str("Repository URL."),
    revision: str("Revision fetched."),
    branch: str("Branch fetched."),
    dir: str("Directory synced."),
  },
  { required: ["branch", "dir", "repo", "revision"] },
);

const ociStatus = obj(
  "The OCI source this status is about.",
  { image: str("Image reference."), dir: str("Directory synced.") },
  { required: ["dir", "image"] },
);

const helmStatus = obj(
  "The Helm source this status is about.",
  { repo: str("Helm repository URL."), chart: str("Chart name."), version: str("Chart version.") },
  { required: ["chart", "repo", "version"] },
);

export const configSyncErrorSchema = obj(
  "One error, in Config Sync's format.",
  {
    code: str("KNV error number without the prefix, e.g. 2009."),
    errorMessage: str("`KNVxxxx: message`."),
    errorResources: arr(
      "Objects the error is about.",
      obj("One object.", {
        sourcePath: str("Path of the declaring file, relative to the synced directory."),
        name: str("Object name."),
        namespace: str("Object namespace; empty for cluster-scoped objects."),
        gvk: obj(
          "Group, version and kind of the object.",
          { group: str("API group; empty for the core group."), version: str("API version."), kind: str("Kind.") },
          { required: ["group", "kind", "version"] },
        ),
      }),
    ),
  },
  { required: ["code", "errorMessage"] },
);

export const errorSummarySchema = obj("Counts of the errors.", {
  totalCount: int("How many errors there were."),
  truncated: bool("True when the errors list holds fewer than totalCount."),
  errorCountAfterTruncation: int("How many errors the list holds."),
});

function phase(description: string, extra: Record<string, JsonSchemaProps> = {}): JsonSchemaProps {
  return obj(description, {
    gitStatus,
    ociStatus,
    helmStatus,
    commit: str("Commit (or image digest) this phase last worked on."),
    lastUpdate: time("When this phase was last updated."),
    errors: arr("Errors of this phase.", configSyncErrorSchema),
    errorSummary: errorSummarySchema,
    ...extra,
  });
}

const condition = obj(
  "An observation about the sync.",
  {
    type: str("Reconciling, Stalled, Syncing, ReconcilerFinalizing or ReconcilerFinalizerFailure."),
    status: str("True, False or Unknown."),
    lastUpdateTime: time("When the condition last changed in any way."),
    lastTransitionTime: time("When status last changed."),
    reason: str("One-word reason for the current status."),
    message: str("Human-readable details."),
    commit: str("Commit the condition is about."),
    errors: arr("Errors behind a Reconciling, Stalled or finalizer condition.", configSyncErrorSchema),
    errorSourceRefs: arr("For Syncing: the status fields that hold the errors.", str("e.g. status.sync.errors")),
    errorSummary: errorSummarySchema,
  },
  { required: ["status", "type"] },
);

export const syncStatusSchema = obj("Observed state of the sync.", {
  observedGeneration: int64("The metadata.generation this status reflects."),
  reconciler: str("Name of the reconciler serving this sync."),
  lastSyncedCommit: str("The last commit synced completely."),
  source: phase("Fetching and reading the source."),
  rendering: phase("Rendering the source (kustomize, Helm).", { message: str("Details about rendering.") }),
  sync: phase("Applying to the cluster."),
  conditions: arr("Current observations.", condition),
});
