/**
 * Whether the manager can set up a reconciler for a sync. The API package's parser checks the
 * spec (required fields, name lengths, RootSync namespace, source types); the manager adds what
 * depends on how it runs.
 */
import { InvalidSyncError, Kind, parseSync, redactUrl, type RSync } from "@driftless/api";
import type { KubeObject } from "@driftless/kube";

export type Validation =
  { readonly ok: true; readonly sync: RSync } | { readonly ok: false; readonly errors: readonly InvalidSyncError[] };

export interface ValidateOptions {
  /** file:// repositories are only for local mode: a RepoSync could otherwise read the manager host's files. */
  readonly allowFileRepos: boolean;
  /**
   * A shell in rendering (exec functions, remote bases) runs the repository's code; a RepoSync is a
   * tenant's, so it gets one only when the administrator says so (--allow-reposync-shell-in-rendering).
   */
  readonly allowRepoSyncShellInRendering?: boolean;
}

export function validateSync(raw: KubeObject, options: ValidateOptions): Validation {
  const parsed = parseSync(raw);
  if (!parsed.ok) return { ok: false, errors: parsed.errors };
  const sync = parsed.value;
  const identity = { kind: sync.kind, namespace: sync.metadata.namespace ?? "", name: sync.metadata.name };
  const repo = sync.spec.git?.repo ?? "";
  if (!options.allowFileRepos && repo.startsWith("file:")) {
    return {
      ok: false,
      errors: [
        new InvalidSyncError(
          identity,
          `spec.git.repo "${redactUrl(repo)}" is a local file repository, which this manager refuses (start it with --allow-file-repos for local mode)`,
        ),
      ],
    };
  }
  if (
    sync.kind === Kind.RepoSync &&
    sync.spec.override?.enableShellInRendering === true &&
    options.allowRepoSyncShellInRendering !== true
  ) {
    return {
      ok: false,
      errors: [
        new InvalidSyncError(
          identity,
          "spec.override.enableShellInRendering is true, which this manager refuses for a RepoSync: it would let the repository run code while rendering. Remove the field, or have an administrator start the reconciler-manager with --allow-reposync-shell-in-rendering",
        ),
      ],
    };
  }
  return { ok: true, sync };
}
