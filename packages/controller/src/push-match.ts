/** Which syncs a push concerns: same repository (any URL form), and the branch they follow. */
import { Defaults, parseSync } from "@driftless/api";
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
    const git = sync.spec.git;
    if (git === undefined) continue;
    const ref: SyncRef = { kind: sync.kind, namespace: sync.metadata.namespace ?? "", name: sync.metadata.name };
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
