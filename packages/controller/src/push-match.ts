/** Which syncs a push concerns: same repository (any URL form), and the branch they follow. */
import { Defaults, parseSync } from "@driftless/api";
import type { KubeObject } from "@driftless/kube";
import type { SyncRef } from "@driftless/queue";
import { repoKey } from "./repo-url.ts";
import type { Push } from "./webhook-push.ts";

export function syncsForPush(syncs: readonly KubeObject[], push: Push): SyncRef[] {
  const keys = new Set(push.repoUrls.map(repoKey));
  return syncs.flatMap((raw) => {
    const parsed = parseSync(raw);
    if (!parsed.ok || raw.metadata.deletionTimestamp !== undefined) return [];
    const sync = parsed.value;
    const git = sync.spec.git;
    if (git === undefined || !keys.has(repoKey(git.repo))) return [];
    const revision = git.revision ?? Defaults.gitRevision;
    // A pinned revision only moves when it names the pushed branch itself.
    const follows =
      revision === "" || revision === Defaults.gitRevision
        ? (git.branch ?? Defaults.gitBranch)
        : revision.replace(/^refs\/heads\//, "");
    if (follows !== push.branch) return [];
    return [{ kind: sync.kind, namespace: sync.metadata.namespace ?? "", name: sync.metadata.name }];
  });
}
