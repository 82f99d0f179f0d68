/**
 * Whether the manager can set up a reconciler for a sync. The API package's parser checks the
 * spec (required fields, name lengths, RootSync namespace, source types); the manager adds what
 * depends on how it runs.
 */
import { InvalidSyncError, Kind, parseSync, redactUrl, type RSync, type SyncIdentity } from "@driftless/api";
import type { KubeObject } from "@driftless/kube";
import { ContainerFor, requestsAboveLimits, type DriftlessContainer } from "./container-overrides.ts";
import { reconcilerResources, ReconcilerContainer } from "./deployment-spec.ts";
import { RenderContainer, renderResources } from "./render-container.ts";

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
  const overLimits = resourcesAboveLimits(sync, identity);
  if (overLimits.length > 0) return { ok: false, errors: overLimits };
  return { ok: true, sync };
}

/**
 * Requests above limits the override entries set, in either container, once the entries landing on it are
 * added up over its defaults (container-overrides.ts; a default limit no entry sets rises to the request):
 * the API server would refuse the pod template (422), and a process-mode reconciler would run on a spec no
 * cluster accepts. The render container is checked whether or not the pod has it now: the reconciler adds
 * it when a kustomization appears.
 */
function resourcesAboveLimits(sync: RSync, identity: SyncIdentity): InvalidSyncError[] {
  const containers: [DriftlessContainer, ReturnType<typeof reconcilerResources>][] = [
    [ReconcilerContainer, reconcilerResources(sync)],
    [RenderContainer, renderResources(sync)],
  ];
  return containers.flatMap(([container, resources]) => {
    const entries = (sync.spec.override?.resources ?? [])
      .map((r) => r.containerName ?? "")
      .filter((n) => Object.hasOwn(ContainerFor, n) && ContainerFor[n] === container);
    const summed = entries.length > 1 ? ` (the entries for ${joinNames([...new Set(entries)])} add up on it)` : "";
    return requestsAboveLimits(resources).map(
      ({ resource, request, limit }) =>
        new InvalidSyncError(
          identity,
          `spec.override.resources: the ${container} container's ${resource} request ${request} exceeds its limit ${limit}${summed}`,
        ),
    );
  });
}

function joinNames(names: readonly string[]): string {
  return names.length <= 1 ? (names[0] ?? "") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}
