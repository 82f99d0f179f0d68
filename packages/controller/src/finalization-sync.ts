/**
 * The sync as the manager sets up a reconciler only to finish its deletion, when its spec no longer
 * validates. Finalization reads no source (the reconciler deletes or releases what its inventory lists,
 * reading the live RSync), so the source becomes a placeholder; what is kept is what decides the
 * reconciler's rights: a RootSync's `override.roleRefs` (dropping them would bind it to cluster-admin).
 * Everything else takes its defaults.
 */
import { Kind, parseSync, SourceType, SyncAnnotation } from "@driftless/api";
import type { KubeObject } from "@driftless/kube";
import type { Validation } from "./validate.ts";

/** Never fetched: the manager passes no source to a reconciler, which reads its own RSync. */
const placeholderSource = { sourceType: SourceType.Git, git: { repo: "https://finalization.invalid/", auth: "none" } };

export function finalizationSync(raw: KubeObject): Validation {
  const parsed = parseSync({
    apiVersion: raw.apiVersion,
    kind: raw.kind,
    // The reconciler reads the deletion policy from the live RSync; an invalid one must not stop it starting.
    metadata: { ...raw.metadata, annotations: withoutDeletionPolicy(raw.metadata.annotations) },
    spec: { ...placeholderSource, ...rightsOf(raw) },
  });
  return parsed.ok ? { ok: true, sync: parsed.value } : { ok: false, errors: parsed.errors };
}

function rightsOf(raw: KubeObject): { override?: { roleRefs: unknown } } {
  if (raw.kind !== Kind.RootSync) return {};
  const override = (raw["spec"] as { override?: { roleRefs?: unknown } } | undefined)?.override;
  return override?.roleRefs === undefined ? {} : { override: { roleRefs: override.roleRefs } };
}

function withoutDeletionPolicy(
  annotations: Readonly<Record<string, string>> | undefined,
): Record<string, string> | undefined {
  if (annotations === undefined) return undefined;
  const { [SyncAnnotation.DeletionPropagationPolicy]: _ignored, ...rest } = annotations;
  return rest;
}
