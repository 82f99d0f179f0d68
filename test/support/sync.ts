/** Creating the RepoSync most tests sync from: `repo-sync` in its namespace, unstructured, `config/` of a TestRepo. */
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
