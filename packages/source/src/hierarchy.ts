/**
 * Step two for a hierarchical source (Config Sync's `sourceFormat: hierarchy`), in Config Sync's
 * stages, each stopping on the errors it finds so that later ones do not report their consequences:
 * 1. directory and name rules, the Repo, kinds no source may declare (validate-objects.ts too), the
 *    selector objects' own rules (no cluster needed), on every object read, including those that
 *    failed a check of their own;
 * 2. kinds and scopes (Config Sync's own kinds are cluster-scoped: no namespace, their directory's
 *    included; no cluster-scoped object namespace-selected; NamespaceSelector names unique), then, once those hold, each object under the top-level directory its kind requires;
 * 3. HierarchyConfigs and the `namespaces/` tree: every object lands in its namespace directory's
 *    namespace, and what abstract directories hold is copied into every namespace below them;
 * 4. duplicates, after inheritance (an inherited object may collide with a namespace's own), and
 *    managed objects in Namespaces declared unmanaged.
 * Repo, HierarchyConfig, NamespaceSelector, Cluster and ClusterSelector shape the result and are
 * never applied.
 */
import { declareObject, resolveKinds, unknownKind } from "./declare-object.ts";
import type { DeclareOptions } from "./declare-object.ts";
import { SourceFormat } from "@driftless/api";
import { checkSelectorObjects, selectForCluster } from "./cluster-selection.ts";
import { checkIllegalKinds } from "./illegal-kinds.ts";
import { findDuplicates } from "./duplicates.ts";
import { NamespaceOnClusterScopedError } from "./errors.ts";
import {
  duplicateNamespaceSelectors,
  namespaceSelectedClusterScoped,
  namespaceSelectorOf,
} from "./namespace-selection.ts";
import { NamespaceAndSelectorError } from "./selector-errors.ts";
import type { SourceError } from "./errors.ts";
import { groupKindKey, readHierarchyConfigs } from "./hierarchy-config.ts";
import {
  baseOf,
  DepthLabelSuffix,
  dirOf,
  HierarchyKind,
  hierarchyKindOf,
  HncManagedByAnnotation,
  isKind,
  isNamespace,
  OriginalHncManagedByAnnotation,
  TopDir,
  topDirOf,
} from "./hierarchy-layout.ts";
import { checkHierarchyRaw, manifestResource, misplaced, what } from "./hierarchy-raw.ts";
import { selectInHierarchy } from "./hierarchy-selection.ts";
import { placeInTree } from "./hierarchy-tree.ts";
import { isJsonObject } from "./json.ts";
import { kindKey } from "./kinds.ts";
import type { KindInfo } from "./kinds.ts";
import type { Manifest } from "./manifest.ts";
import type { DeclaredObject, ManifestSet, SourceResult } from "./result.ts";
import { shapeOf, toSourceResult } from "./result.ts";
import { placeObject } from "./scope.ts";
import { checkObjectRules, checkUnmanagedNamespaces } from "./validate-objects.ts";

interface Typed {
  readonly manifest: Manifest;
  readonly info: KindInfo;
}

export async function declareHierarchy(set: ManifestSet, options: DeclareOptions): Promise<SourceResult> {
  const counts = shapeOf(set);
  const fail = (errors: readonly SourceError[]): SourceResult => toSourceResult([], errors, counts);

  // Stage 1 looks at every object read, flawed ones too, so one pass reports all of an object's errors.
  const rawErrors = [
    ...set.errors,
    ...checkIllegalKinds(set.identified, SourceFormat.Hierarchy),
    ...checkObjectRules(set.identified),
    ...checkHierarchyRaw(set.identified),
    ...checkSelectorObjects(set.identified),
  ];
  if (rawErrors.length > 0) return fail(rawErrors);
  // Cluster selection: what this cluster leaves out is gone before the tree is built. An object in a
  // namespace directory goes with its Namespace.
  const directoryNamespaces = new Map(
    set.manifests
      .filter((m) => isNamespace(m) && topDirOf(m.sourcePath) === TopDir.Namespaces)
      .map((m) => [dirOf(m.sourcePath), m.metadata.name] as const),
  );
  const selection = selectForCluster(
    set.manifests,
    options.clusterName,
    (m) => m.metadata.namespace ?? directoryNamespaces.get(dirOf(m.sourcePath)),
  );
  if (selection.errors.length > 0) return fail(selection.errors);

  // Stage 2, in Config Sync's order: scopes first (a cluster-scoped object declares no namespace, nor
  // takes its directory's; a namespaced one is not namespace-selected besides), and only when all hold,
  // each object under the top-level directory its kind calls for. Config Sync's own kinds (Repo,
  // HierarchyConfig, NamespaceSelector) are cluster-scoped whatever the cluster serves, and never applied.
  const namespaceNames = new Set(
    selection.manifests
      .filter((m) => isNamespace(m) && topDirOf(m.sourcePath) === TopDir.Namespaces)
      .map((m) => m.metadata.name),
  );
  const others = selection.manifests.filter((m) => hierarchyKindOf(m) === undefined);
  const kinds = await resolveKinds(others, options.kinds);
  const unknown: SourceError[] = [];
  const scopeErrors: SourceError[] = [];
  const placementErrors: SourceError[] = [];
  const hierarchyConfigs: Manifest[] = [];
  const selectors: Manifest[] = [];
  const cluster: Typed[] = [];
  const inTree: Typed[] = [];
  const setAside: SourceError[] = [];
  for (const manifest of selection.manifests) {
    const special = hierarchyKindOf(manifest);
    // Cluster and ClusterSelector: checked to be in clusterregistry/ in stage 1, and used by selection.
    if (special === HierarchyKind.Cluster || special === HierarchyKind.ClusterSelector) continue;
    const top = topDirOf(manifest.sourcePath);
    if (special !== undefined) {
      const home = special === HierarchyKind.NamespaceSelector ? TopDir.Namespaces : TopDir.System;
      const problem = ownKindScopeProblem(manifest, home, namespaceNames);
      if (problem) scopeErrors.push(problem);
      else if (top !== home) placementErrors.push(misplaced(manifest, home));
      else if (special === HierarchyKind.HierarchyConfig) hierarchyConfigs.push(manifest);
      else if (special === HierarchyKind.NamespaceSelector) selectors.push(manifest);
      continue;
    }
    const info = kinds.get(kindKey(manifest.apiVersion, manifest.kind)) ?? guessedKind(manifest, top, options);
    if (info === undefined) {
      if (options.setAsideUnknownKinds === true) setAside.push(unknownKind(manifest));
      else unknown.push(unknownKind(manifest));
    } else if (isNamespace(manifest) && manifest.metadata.namespace !== undefined) {
      // A Namespace is cluster-scoped wherever it sits, so it may not declare one (as nomos: KNV1052).
      const message = `${what(manifest)}: Namespace is cluster-scoped and must not declare metadata.namespace`;
      scopeErrors.push(new NamespaceOnClusterScopedError(message, { resources: [manifestResource(manifest)] }));
    } else if (isNamespace(manifest) && namespaceSelectorOf(manifest) !== undefined) {
      scopeErrors.push(namespaceSelectedClusterScoped(manifest));
    } else if (!isNamespace(manifest) && info.namespaced && selectedWithNamespace(manifest, namespaceNames)) {
      const message = `${what(manifest)}: declares both metadata.namespace (its own, or its Namespace directory's) and the annotation configmanagement.gke.io/namespace-selector; remove one`;
      scopeErrors.push(new NamespaceAndSelectorError(message, { resources: [manifestResource(manifest)] }));
    } else if (isNamespace(manifest) || info.namespaced) {
      if (top === TopDir.Namespaces) inTree.push({ manifest, info });
      else placementErrors.push(misplaced(manifest, TopDir.Namespaces));
    } else {
      const problem = namespaceOnClusterScoped(manifest, namespaceNames, TopDir.Cluster);
      if (problem) scopeErrors.push(problem);
      else if (namespaceSelectorOf(manifest) !== undefined) scopeErrors.push(namespaceSelectedClusterScoped(manifest));
      else if (top !== TopDir.Cluster) placementErrors.push(misplaced(manifest, TopDir.Cluster));
      else cluster.push({ manifest, info });
    }
  }
  // Config Sync checks NamespaceSelector names with the scopes, before the tree and the HierarchyConfigs.
  scopeErrors.push(...duplicateNamespaceSelectors(selection.manifests));
  // Config Sync builds the tree, where objects are found misplaced, only from objects whose scopes hold.
  const stageErrors = [...unknown, ...(scopeErrors.length > 0 ? scopeErrors : placementErrors)];
  if (stageErrors.length > 0) return fail([...stageErrors, ...setAside]);

  // Stage 3.
  const clusterKinds = new Set(cluster.map(({ manifest }) => groupKindKey(manifest.group, manifest.kind)));
  const configs = readHierarchyConfigs(hierarchyConfigs, clusterKinds);
  const tree = placeInTree(inTree, selectors, configs.notInherited);
  if (configs.errors.length > 0 || tree.errors.length > 0) return fail([...configs.errors, ...tree.errors]);
  const selected = selectInHierarchy(
    tree.placed,
    cluster,
    selectors,
    (namespace) => withHncMetadata(namespace).metadata.labels ?? {},
  );
  if (selected.errors.length > 0) return fail(selected.errors);

  // Stage 4.
  const objects: DeclaredObject[] = cluster.map(({ manifest, info }) => declareObject(manifest, info, ""));
  for (const { entry, namespace } of selected.placed) {
    const manifest = isNamespace(entry.manifest) ? withHncMetadata(entry.manifest) : entry.manifest;
    objects.push(declareObject(manifest, entry.info, namespace));
  }
  const lastErrors = [...findDuplicates(objects), ...checkUnmanagedNamespaces(objects)];
  return toSourceResult(objects, lastErrors, counts, setAside);
}

/** Offline (`allowUnknownKinds`), a kind nobody defines takes the scope of its top-level directory. */
function guessedKind(manifest: Manifest, top: string, options: DeclareOptions): KindInfo | undefined {
  if (options.allowUnknownKinds !== true) return undefined;
  if (top !== TopDir.Namespaces && top !== TopDir.Cluster) return undefined;
  return { group: manifest.group, version: manifest.version, resource: "", namespaced: top === TopDir.Namespaces };
}

/**
 * What Config Sync writes on a hierarchy Namespace: one `<dir>.tree.hnc.x-k8s.io/depth` label per
 * directory from `namespaces/` down to the Namespace's own (valued with the distance, 0 for its own),
 * and `hnc.x-k8s.io/managed-by: configmanagement.gke.io` (a declared value is kept in
 * `configsync.gke.io/original-hnc-managed-by-value`).
 */
function withHncMetadata(manifest: Manifest): Manifest {
  const dirs = manifest.sourcePath.split("/").slice(1, -1);
  const labels: Record<string, string> = { ...manifest.metadata.labels };
  dirs.forEach((dir, i) => {
    labels[`${dir}${DepthLabelSuffix}`] = String(dirs.length - i - 1);
  });
  const annotations: Record<string, string> = { ...manifest.metadata.annotations };
  const declared = annotations[HncManagedByAnnotation];
  if (declared !== undefined && declared !== "") annotations[OriginalHncManagedByAnnotation] = declared;
  annotations[HncManagedByAnnotation] = "configmanagement.gke.io";
  const metadata = manifest.raw["metadata"];
  return {
    ...manifest,
    metadata: { ...manifest.metadata, labels, annotations },
    raw: { ...manifest.raw, metadata: { ...(isJsonObject(metadata) ? metadata : {}), labels, annotations } },
  };
}

/**
 * The namespace Config Sync gives an object of a namespace directory that declares none: the
 * directory's, where a Namespace of that name is declared. Namespaces and NamespaceSelectors take none.
 */
function directoryNamespace(manifest: Manifest, namespaceNames: ReadonlySet<string>): string | undefined {
  if (isNamespace(manifest) || isKind(manifest, HierarchyKind.NamespaceSelector)) return undefined;
  if (topDirOf(manifest.sourcePath) !== TopDir.Namespaces) return undefined;
  const base = baseOf(dirOf(manifest.sourcePath));
  return namespaceNames.has(base) ? base : undefined;
}

/** A cluster-scoped object with a namespace, declared or its directory's (KNV1052); `home` is where it belongs. */
function namespaceOnClusterScoped(
  manifest: Manifest,
  namespaceNames: ReadonlySet<string>,
  home: TopDir,
): SourceError | undefined {
  const placement = placeObject(manifest, false, { kind: "RootSync" });
  if (!placement.ok) return placement.error;
  const namespace = directoryNamespace(manifest, namespaceNames);
  if (namespace === undefined) return undefined;
  const dir = dirOf(manifest.sourcePath);
  const message = `${what(manifest)}: ${manifest.kind} is cluster-scoped, but everything in ${dir}/ belongs to namespace "${namespace}"; move it to ${home}/`;
  return new NamespaceOnClusterScopedError(message, { resources: [manifestResource(manifest)] });
}

/**
 * Repo, HierarchyConfig and NamespaceSelector, checked as Config Sync checks any cluster-scoped object
 * before it looks at directories: no namespace (KNV1052), then no namespace selector (KNV1004).
 */
function ownKindScopeProblem(
  manifest: Manifest,
  home: TopDir,
  namespaceNames: ReadonlySet<string>,
): SourceError | undefined {
  const problem = namespaceOnClusterScoped(manifest, namespaceNames, home);
  if (problem) return problem;
  return namespaceSelectorOf(manifest) === undefined ? undefined : namespaceSelectedClusterScoped(manifest);
}

/** A namespace-selected object that has a namespace already, as Config Sync sees it (KNV1053). */
function selectedWithNamespace(manifest: Manifest, namespaceNames: ReadonlySet<string>): boolean {
  if (namespaceSelectorOf(manifest) === undefined) return false;
  return manifest.metadata.namespace !== undefined || directoryNamespace(manifest, namespaceNames) !== undefined;
}
