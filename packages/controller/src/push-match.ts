/**
 * Which syncs a push concerns: same repository (any URL form), and the branch they follow; for a
 * registry push, OCI syncs whose spec.oci.image names the pushed repository and tag.
 */
import { Defaults, parseSync, SourceType, type RSync } from "@driftless/api";
import { parseImageReference } from "@driftless/oci";
import type { KubeObject } from "@driftless/kube";
import type { SyncRef } from "@driftless/queue";
import { repoKey } from "./repo-url.ts";
import type { Push } from "./webhook-push.ts";

export interface PushMatch {
  readonly syncs: readonly SyncRef[];
  /** Syncs skipped because their `spec.git.repo` cannot be read; one bad sync never fails a push for the others. */
  readonly unreadable: readonly { readonly sync: SyncRef; readonly repo: string }[];
}

export function syncsForPush(syncs: readonly KubeObject[], push: Push): PushMatch {
  const keys = new Set(push.repoUrls.map(repoKey).filter((key) => key !== undefined));
  const matched: SyncRef[] = [];
  const unreadable: { sync: SyncRef; repo: string }[] = [];
  for (const raw of syncs) {
    const parsed = parseSync(raw);
    if (!parsed.ok || raw.metadata.deletionTimestamp !== undefined) continue;
    const sync = parsed.value;
    const ref: SyncRef = { kind: sync.kind, namespace: sync.metadata.namespace ?? "", name: sync.metadata.name };
    if (push.image === true) {
      if (followsImage(sync, push)) matched.push(ref);
      continue;
    }
    const git = sync.spec.git;
    if (git === undefined) continue;
    const key = repoKey(git.repo);
    if (key === undefined) unreadable.push({ sync: ref, repo: git.repo });
    if (key === undefined || !keys.has(key)) continue;
    const revision = git.revision ?? Defaults.gitRevision;
    // A pinned revision only moves when it names the pushed branch itself.
    const follows =
      revision === "" || revision === Defaults.gitRevision
        ? (git.branch ?? Defaults.gitBranch)
        : revision.replace(/^refs\/heads\//, "");
    if (follows === push.branch) matched.push(ref);
  }
  return { syncs: matched, unreadable };
}

/** An image pinned by digest never moves; one by tag moves when that tag of that repository is pushed. */
function followsImage(sync: RSync, push: Push): boolean {
  const oci = sync.spec.oci;
  if (sync.spec.sourceType !== SourceType.Oci || oci === undefined) return false;
  try {
    const image = parseImageReference(oci.image);
    return (
      image.digest === undefined &&
      image.tag === push.branch &&
      push.repoUrls.includes(`${image.registry}/${image.repository}`)
    );
  } catch {
    return false; // an unreadable image is reported on the sync's own status by its reconciler
  }
}
