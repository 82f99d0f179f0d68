/** Creating the RepoSync most tests sync from: `repo-sync` in its namespace, unstructured, `config/` of a TestRepo. */
import { eventually } from "./eventually.ts";
import type { JsonObject } from "./fixtures.ts";
import type { TestRepo } from "./git.ts";
import { customApi } from "./kube.ts";

export interface RepoSyncOptions {
  readonly annotations?: Readonly<Record<string, string>>;
  /** More `spec.git` fields (`period`, `auth`, ...), over the defaults. */
  readonly git?: Readonly<Record<string, unknown>>;
}

export async function createRepoSync(namespace: string, repo: TestRepo, options: RepoSyncOptions = {}): Promise<void> {
  await customApi().createNamespacedCustomObject({
    group: "configsync.gke.io",
    version: "v1beta1",
    namespace,
    plural: "reposyncs",
    body: {
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RepoSync",
      metadata: { name: "repo-sync", namespace, annotations: { ...options.annotations } },
      spec: {
        sourceFormat: "unstructured",
        git: { repo: repo.url, branch: repo.branch, dir: "config", auth: "none", ...options.git },
      },
    },
  });
}

/** A RepoSync's status (empty before its reconciler first writes it), beside root-sync.ts's rootSyncStatus. */
export async function repoSyncStatus(namespace: string, name = "repo-sync"): Promise<JsonObject> {
  const sync = (await customApi().getNamespacedCustomObject({
    group: "configsync.gke.io",
    version: "v1beta1",
    namespace,
    plural: "reposyncs",
    name,
  })) as JsonObject;
  return (sync["status"] ?? {}) as JsonObject;
}

export interface SyncedToOptions {
  readonly timeoutMs?: number;
  /** The reconciler's output so far, added to a failure's message. */
  readonly output?: () => string;
}

/** Waits until `repo-sync` in `namespace` reports `commit` as its lastSyncedCommit. */
export async function repoSyncSyncedTo(
  namespace: string,
  commit: string,
  options: SyncedToOptions = {},
): Promise<void> {
  try {
    await eventually(async () => (await repoSyncStatus(namespace))["lastSyncedCommit"] === commit, {
      // As rootSynced and eventually: a pass (and a reconciler's start) took over 30 s on a loaded CI machine.
      timeoutMs: options.timeoutMs ?? 60_000,
      what: `repo-sync to sync ${commit.slice(0, 7)}`,
    });
  } catch (error) {
    if (options.output === undefined) throw error;
    throw new Error(`${(error as Error).message}; the reconciler's output: ${options.output().slice(-3000)}`, {
      cause: error,
    });
  }
}
