/**
 * @driftless/source: a directory of manifests (a Git checkout) to the objects one sync declares.
 *
 * Two steps, so the cluster-independent part can run without a cluster (`driftless vet`) and the
 * cluster-dependent part can be re-run when discovery changes:
 * 1. `readManifests(dir)`: find, parse and validate every `.yaml`/`.yml`/`.json` file.
 * 2. `declareObjects(set, { scope, kinds })`: resolve kinds, place objects in namespaces, hash, dedupe.
 * `readSource(dir, options)` does both. `format: "hierarchy"` (a RootSync's default in Config Sync) reads
 * `system/`, `cluster/`, `clusterregistry/` and `namespaces/` with abstract namespaces and inheritance.
 *
 * @example
 * ```ts
 * import { readSource } from "@driftless/source";
 *
 * const source = await readSource(checkoutDir, {
 *   scope: { kind: "RootSync" },
 *   format: "hierarchy",
 *   kinds: discovery, // { resolveKind(apiVersion, kind) => { group, version, resource, namespaced } | undefined }
 * });
 * if (!source.complete) {
 *   reportSourceErrors(source.errors); // nothing is applied, nothing is pruned
 * } else {
 *   await apply(source.objects); // source.isEmpty: declares nothing at all
 * }
 * ```
 */
export { readSource, sourceFormatFor } from "./read-source.ts";
export type { ReadSourceOptions } from "./read-source.ts";
export { readManifests } from "./read-manifests.ts";
export type { ReadManifestsOptions } from "./read-manifests.ts";
export { declareObjects } from "./declare.ts";
export { clustersToCheck, declareForClusters, mergeClusterErrors, UnnamedClusterName } from "./each-cluster.ts";
export type { ClusterError, ClusterName, ClusterResult } from "./each-cluster.ts";
export { implicitNamespace, implicitNamespaces, withSpecialNamespacesDetached } from "./implicit-namespaces.ts";
export type { DeclareOptions } from "./declare.ts";
export type { CompleteSource, DeclaredObject, FailedSource, ManifestSet, SourceResult } from "./result.ts";
export { splitApiVersion } from "./manifest.ts";
export type { Manifest, ManifestMetadata } from "./manifest.ts";
export type { KindInfo, KindResolver } from "./kinds.ts";
export { builtinKinds } from "./builtin-kinds.ts";
export { flatHydratedObject, hydratedObject, hydratedPaths, toYamlStream } from "./hydrate-output.ts";
export type { SyncScope } from "./scope.ts";
export { objectKey } from "./object-id.ts";
export type { ObjectId } from "./object-id.ts";
export { parseDependsOn } from "./depends-on.ts";
export type { DependsOnParse } from "./depends-on.ts";
export { canonicalJson, contentHash } from "./hash.ts";
export type { JsonObject, JsonPrimitive, JsonValue } from "./json.ts";
export {
  BadScopeError,
  DuplicateObjectError,
  IllegalAnnotationError,
  IllegalFieldError,
  IllegalLabelError,
  IllegalManagementAnnotationError,
  InvalidAnnotationValueError,
  InvalidDependsOnError,
  InvalidNameError,
  InvalidNamespaceNameError,
  InvalidTypeError,
  ManifestLimitError,
  ManifestParseError,
  MissingNameError,
  NamespaceOnClusterScopedError,
  ObjectCountError,
  SourceDirectoryError,
  SourceError,
  SourceReadError,
  UnknownKindAtReadError,
  UnsafeSymlinkError,
  UnsupportedObjectError,
  MalformedCrdError,
} from "./errors.ts";
export type { SourceErrorDetails } from "./errors.ts";
export {
  ClusterScopedHierarchyConfigError,
  IllegalAbstractNamespaceObjectKindError,
  IllegalDepthLabelError,
  IllegalHierarchicalKindError,
  IllegalHierarchyModeError,
  IllegalKindInNamespacesError,
  IllegalNamespaceDeclarationError,
  IllegalNamespaceError,
  IllegalNamespaceSubdirectoryError,
  IllegalTopLevelNamespaceError,
  IncorrectTopLevelDirectoryError,
  MissingRepoError,
  MultipleSingletonsError,
  NamespaceDirectoryMismatchError,
  UnsupportedHierarchyConfigResourceError,
  UnsupportedRepoVersionError,
  UnsyncableResourcesError,
} from "./hierarchy-errors.ts";
export { SourceLimits } from "./limits.ts";
export { clusterNamesIn, SelectorAnnotation } from "./cluster-selection.ts";
export { usesDynamicNamespaceSelector } from "./namespace-selection.ts";
export type { LiveNamespace } from "./namespace-selection.ts";
export {
  IllegalSelectorAnnotationError,
  InvalidSelectorError,
  NamespaceAndSelectorError,
  SelectorAnnotationConflictError,
  UnknownSelectorError,
} from "./selector-errors.ts";
