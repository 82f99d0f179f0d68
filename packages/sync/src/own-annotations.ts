/**
 * The annotations a reconciler writes on its own RootSync/RepoSync as Config Sync's does. Config Sync's
 * `configsync.gke.io/image-to-sync`: after each fetch of an
 * OCI image or an oci:// Helm chart, `<spec image or repo>@sha256:<commit>` (the commit is the digest
 * for an image, the chart version for a chart, as Config Sync writes both); removed for other sources.
 * Admission webhooks that verify signatures read it: one that refuses the write stops the pass before
 * anything of the artifact is rendered or applied.
 */
import { DriftlessError, ErrorClass, KnvCode, SourceType, SyncAnnotation, type RSync } from "@driftless/api";
import type { SyncIdentity } from "@driftless/applier";
import type { KubeClient, KubeObject } from "@driftless/kube";
import { rsyncMapping } from "./rsync.ts";

/** The annotation's value for `sync` at `commit`; undefined when the source is neither. */
export function imageToSync(sync: RSync, commit: string): string | undefined {
  const { sourceType, oci, helm } = sync.spec;
  if (sourceType === SourceType.Oci && oci !== undefined) return `${oci.image}@sha256:${commit}`;
  if (sourceType === SourceType.Helm && helm !== undefined && helm.repo.startsWith("oci://"))
    return `${helm.repo}@sha256:${commit}`;
  return undefined;
}

/** Sets (or removes) the annotation on the live RSync `raw` when it does not say so already. */
export function recordImageToSync(
  client: KubeClient,
  identity: SyncIdentity,
  raw: KubeObject,
  sync: RSync,
  commit: string,
): Promise<void> {
  return recordOwnAnnotation(client, identity, raw, SyncAnnotation.ImageToSync, imageToSync(sync, commit));
}

/**
 * Config Sync's `configsync.gke.io/dynamic-ns-selector-enabled` on a RootSync, written as its reconciler
 * writes it: "true" once the source selects dynamically, "false" only to turn a "true" off; a sync that
 * never selected dynamically never carries it.
 */
export function recordDynamicNsSelector(
  client: KubeClient,
  identity: SyncIdentity,
  raw: KubeObject,
  enabled: boolean,
): Promise<void> {
  const key = SyncAnnotation.DynamicNsSelectorEnabled;
  if (!enabled && raw.metadata.annotations?.[key] !== "true") return Promise.resolve();
  return recordOwnAnnotation(client, identity, raw, key, String(enabled));
}

/**
 * Merge-patches one annotation of the reconciler's own RSync (undefined removes it), only when the live `raw`
 * says otherwise. The admission policy lets a reconciler write exactly these annotations of its own sync.
 */
async function recordOwnAnnotation(
  client: KubeClient,
  identity: SyncIdentity,
  raw: KubeObject,
  key: string,
  wanted: string | undefined,
): Promise<void> {
  if (raw.metadata.annotations?.[key] === wanted) return;
  try {
    await client.patch(
      rsyncMapping(identity.kind),
      identity.namespace,
      identity.name,
      { metadata: { annotations: { [key]: wanted ?? null } } },
      "merge",
    );
  } catch (error) {
    throw new DriftlessError({
      code: KnvCode.ApiServer,
      errorClass: ErrorClass.Retry,
      message: `failed to patch ${identity.kind} annotation ${key}${wanted === undefined ? "" : ` to ${wanted}`}: ${error instanceof Error ? error.message : String(error)}`,
      cause: error,
    });
  }
}
