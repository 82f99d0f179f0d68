/**
 * Step two for a hierarchical source (Config Sync's `sourceFormat: hierarchy`), in Config Sync's
 * stages, each stopping on the errors it finds so that later ones do not report their consequences:
 * 1. directory and name rules, the Repo, kinds no source may declare (validate-objects.ts too), the
 *    selector objects' own rules (no cluster needed), on every object read, including those that
 *    failed a check of their own;
 * 2. kinds, and each object under the top-level directory its scope requires;
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
import { namespaceSelectorOf } from "./namespace-selection.ts";
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

  // Stage 2: Config Sync's own kinds are set aside; everything else is typed and must sit under the
  // top-level directory its scope calls for.
  const errors: SourceError[] = [];
  const hierarchyConfigs: Manifest[] = [];
  const selectors: Manifest[] = [];
  const others: Manifest[] = [];
  for (const manifest of selection.manifests) {
    const special = hierarchyKindOf(manifest);
    const top = topDirOf(manifest.sourcePath);
    if (special === HierarchyKind.Repo || special === HierarchyKind.HierarchyConfig) {
      if (top !== TopDir.System) errors.push(misplaced(manifest, TopDir.System));
      else if (special === HierarchyKind.HierarchyConfig) hierarchyConfigs.push(manifest);
    } else if (special === HierarchyKind.NamespaceSelector) {
      if (top !== TopDir.Namespaces) errors.push(misplaced(manifest, TopDir.Namespaces));
      else selectors.push(manifest);
    } else if (special === undefined) {
      others.push(manifest);
    }
    // Cluster and ClusterSelector: checked to be in clusterregistry/ in stage 1.
  }
  const kinds = await resolveKinds(others, options.kinds);
  // Config Sync gives everything in a namespace directory that directory's namespace before it checks
  // scopes, so a cluster-scoped object there is one that declares a namespace (KNV1052).
  const namespaceDirs = new Set(
    others
      .filter((m) => isNamespace(m) && topDirOf(m.sourcePath) === TopDir.Namespaces)
      .map((m) => dirOf(m.sourcePath)),
  );
  // Config Sync gives an object the namespace of its directory where a Namespace of that name is declared.
  const namespaceNames = new Set(
    others.filter((m) => isNamespace(m) && topDirOf(m.sourcePath) === TopDir.Namespaces).map((m) => m.metadata.name),
  );
  const cluster: Typed[] = [];
  const inTree: Typed[] = [];
  const setAside: SourceError[] = [];
  for (const manifest of others) {
    const top = topDirOf(manifest.sourcePath);
    const info = kinds.get(kindKey(manifest.apiVersion, manifest.kind)) ?? guessedKind(manifest, top, options);
    if (info === undefined) {
      if (options.setAsideUnknownKinds === true) setAside.push(unknownKind(manifest));
      else errors.push(unknownKind(manifest));
    } else if (isNamespace(manifest) && manifest.metadata.namespace !== undefined) {
      // A Namespace is cluster-scoped wherever it sits, so it may not declare one (as nomos: KNV1052).
      const message = `${what(manifest)}: Namespace is cluster-scoped and must not declare metadata.namespace`;
      errors.push(new NamespaceOnClusterScopedError(message, { resources: [manifestResource(manifest)] }));
    } else if (!isNamespace(manifest) && info.namespaced && selectedWithNamespace(manifest, namespaceNames)) {
      const message = `${what(manifest)}: declares both metadata.namespace (its own, or its Namespace directory's) and the annotation configmanagement.gke.io/namespace-selector; remove one`;
      errors.push(new NamespaceAndSelectorError(message, { resources: [manifestResource(manifest)] }));
    } else if (isNamespace(manifest) || info.namespaced) {
      if (top === TopDir.Namespaces) inTree.push({ manifest, info });
      else errors.push(misplaced(manifest, TopDir.Namespaces));
    } else {
      const dir = dirOf(manifest.sourcePath);
      const placement = placeObject(manifest, false, { kind: "RootSync" });
      if (manifest.metadata.namespace === undefined && namespaceDirs.has(dir)) {
        const message = `${what(manifest)}: ${manifest.kind} is cluster-scoped, but everything in ${dir}/ belongs to namespace "${baseOf(dir)}"; move it to ${TopDir.Cluster}/`;
        errors.push(new NamespaceOnClusterScopedError(message, { resources: [manifestResource(manifest)] }));
      } else if (!placement.ok) errors.push(placement.error);
      else if (top !== TopDir.Cluster) errors.push(misplaced(manifest, TopDir.Cluster));
      else cluster.push({ manifest, info });
    }
  }
  if (errors.length > 0) return fail([...errors, ...setAside]);

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

/** A namespace-selected object that has a namespace already, as Config Sync sees it (KNV1053). */
function selectedWithNamespace(manifest: Manifest, namespaceNames: ReadonlySet<string>): boolean {
  if (namespaceSelectorOf(manifest) === undefined) return false;
  if (manifest.metadata.namespace !== undefined) return true;
  return topDirOf(manifest.sourcePath) === TopDir.Namespaces && namespaceNames.has(baseOf(dirOf(manifest.sourcePath)));
}
