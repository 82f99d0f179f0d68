/**
 * Which namespace each object lands in, and which objects a sync may declare at all. The rules are
 * Config Sync's for unstructured sources:
 * - RepoSync: only namespaced objects, in the RepoSync's namespace; those naming none are put there.
 * - RootSync: anything; a namespaced object naming no namespace goes to "default".
 * - Cluster-scoped objects never name a namespace.
 * - A kind nobody defines (read offline): only the namespace is checked. A RepoSync's object naming
 *   another namespace is refused whatever its scope (if namespaced it is in the wrong namespace, if
 *   cluster-scoped the RepoSync may not declare it either); otherwise it is placed as it says.
 */
import type { ErrorResource } from "@driftless/api";
import { DefaultNamespace } from "./constants.ts";
import { BadScopeError, NamespaceOnClusterScopedError } from "./errors.ts";
import type { SourceError } from "./errors.ts";
import type { Manifest } from "./manifest.ts";
import { describeObject } from "./object-id.ts";

/** The sync whose source is being read. */
export type SyncScope = { readonly kind: "RootSync" } | { readonly kind: "RepoSync"; readonly namespace: string };

export type Placement =
  { readonly ok: true; readonly namespace: string } | { readonly ok: false; readonly error: SourceError };

/**
 * The object's namespace ("" when cluster-scoped), or why it may not be declared in this sync.
 * `namespaced` is undefined for a kind nobody defines (offline).
 */
export function placeObject(manifest: Manifest, namespaced: boolean | undefined, scope: SyncScope): Placement {
  const declared = manifest.metadata.namespace;
  const resource: ErrorResource = {
    group: manifest.group,
    version: manifest.version,
    kind: manifest.kind,
    ...(declared !== undefined ? { namespace: declared } : {}),
    name: manifest.metadata.name,
    sourcePath: manifest.sourcePath,
  };
  const what = `${manifest.sourcePath}: ${describeObject(resource)}`;

  if (namespaced === undefined && scope.kind === "RootSync") return { ok: true, namespace: declared ?? "" };
  if (namespaced === false) {
    if (scope.kind === "RepoSync") return { ok: false, error: clusterScopedInRepoSync(manifest, resource) };
    if (declared !== undefined) {
      const message = `${what}: ${manifest.kind} is cluster-scoped and must not declare metadata.namespace`;
      return { ok: false, error: new NamespaceOnClusterScopedError(message, { resources: [resource] }) };
    }
    return { ok: true, namespace: "" };
  }

  if (scope.kind === "RootSync") return { ok: true, namespace: declared ?? DefaultNamespace };
  if (declared === undefined || declared === scope.namespace) return { ok: true, namespace: scope.namespace };
  return { ok: false, error: otherNamespaceInRepoSync(scope.namespace, resource) };
}

/**
 * KNV1058 for a cluster-scoped object in a RepoSync's source, in Config Sync's words (its namespace
 * reconciler's scope validator), which users match on; the object follows in status as Config Sync prints it.
 */
function clusterScopedInRepoSync(manifest: Manifest, resource: ErrorResource): SourceError {
  const message =
    `Resources in namespace Repos must be Namespace-scoped type, but objects of type ${goGroupVersionKind(manifest)} ` +
    `are Cluster-scoped. Move ${manifest.metadata.name} to the Root repo.`;
  return new BadScopeError(message, { resources: [resource] });
}

/** KNV1058 for a RepoSync's object naming another namespace, in Config Sync's words (its repository scope check). */
function otherNamespaceInRepoSync(namespace: string, resource: ErrorResource): SourceError {
  const message = `Resources in the "${namespace}" repo must either omit metadata.namespace or declare metadata.namespace="${namespace}"`;
  return new BadScopeError(message, { resources: [resource] });
}

/** As Go prints a schema.GroupVersionKind: `rbac.authorization.k8s.io/v1, Kind=ClusterRole`, `/v1, Kind=Namespace`. */
function goGroupVersionKind(manifest: Manifest): string {
  return `${manifest.group}/${manifest.version}, Kind=${manifest.kind}`;
}
