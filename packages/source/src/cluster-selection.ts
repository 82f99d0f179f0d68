/**
 * Cluster selection, in both source formats, right after the first stage's checks (Config Sync's
 * order): an object annotated `configsync.gke.io/cluster-name-selector: a,b` is kept only on a cluster
 * named in the list (case-insensitive); one annotated `configmanagement.gke.io/cluster-selector: <name>`
 * only if that ClusterSelector matches the labels of the Cluster object named after this cluster (no
 * such Cluster: no labels). An unselected Namespace takes everything in it along. Cluster and
 * ClusterSelector objects shape the result and are never applied. Without a cluster name, every
 * cluster-name-selected object is left out, as in Config Sync.
 */
import type { SourceError } from "./errors.ts";
import { DuplicateObjectError, UnparsableConfigError } from "./errors.ts";
import { HierarchyKind, isKind, isNamespace, isSelecting } from "./hierarchy-layout.ts";
import { manifestResource, what } from "./hierarchy-raw.ts";
import { parseLabelSelector } from "./label-selector.ts";
import type { Manifest } from "./manifest.ts";
import {
  IllegalSelectorAnnotationError,
  InvalidSelectorError,
  SelectorAnnotationConflictError,
  UnknownSelectorError,
} from "./selector-errors.ts";
import { decodeSelectorSpec } from "./selector-spec.ts";

export const SelectorAnnotation = {
  Namespace: "configmanagement.gke.io/namespace-selector",
  Cluster: "configmanagement.gke.io/cluster-selector",
  ClusterName: "configsync.gke.io/cluster-name-selector",
} as const;

export interface ClusterSelection {
  /** What this cluster keeps, without Cluster and ClusterSelector objects. */
  readonly manifests: readonly Manifest[];
  readonly errors: readonly SourceError[];
}

/**
 * The clusters a source speaks of, in the order it names them: its Cluster objects, then the names its
 * `configsync.gke.io/cluster-name-selector` annotations list (what `nomos hydrate` writes a folder for).
 */
export function clusterNamesIn(manifests: readonly Manifest[]): string[] {
  const names = new Set<string>();
  for (const manifest of manifests)
    if (isSelecting(manifest, HierarchyKind.Cluster) && manifest.metadata.name !== "")
      names.add(manifest.metadata.name);
  for (const manifest of manifests) {
    const inline = manifest.metadata.annotations?.[SelectorAnnotation.ClusterName];
    for (const name of inline?.split(",") ?? []) if (name.trim() !== "") names.add(name.trim());
  }
  return [...names];
}

/**
 * The rules of selector objects that hold on every cluster, checked on every object in the first stage
 * (Config Sync's order): Clusters and selectors may not be cluster-selected (KNV1004), and ClusterSelector
 * names are unique (KNV1029). `selectForCluster` expects a source that passed them.
 */
export function checkSelectorObjects(manifests: readonly Manifest[]): SourceError[] {
  const errors: SourceError[] = [];
  const selectors = new Map<string, Manifest[]>();
  for (const manifest of manifests) {
    const annotations = manifest.metadata.annotations ?? {};
    const keys = [SelectorAnnotation.Cluster, SelectorAnnotation.ClusterName].filter((k) => k in annotations);
    if (keys.length > 0 && isSelectorOrCluster(manifest)) {
      const message = `${what(manifest)}: ${manifest.kind}s may not be cluster-selected; remove the annotation ${keys.join(", ")}`;
      errors.push(new IllegalSelectorAnnotationError(message, { resources: [manifestResource(manifest)] }));
    }
    if (isKind(manifest, HierarchyKind.ClusterSelector)) {
      const same = selectors.get(manifest.metadata.name);
      if (same) same.push(manifest);
      else selectors.set(manifest.metadata.name, [manifest]);
    }
  }
  for (const [name, same] of selectors) {
    if (same.length < 2) continue;
    const message = `ClusterSelectors must have unique names; "${name}" is declared in ${same.map((m) => m.sourcePath).join(", ")}`;
    errors.push(new DuplicateObjectError(message, { resources: same.map(manifestResource) }));
  }
  return errors;
}

/**
 * What `clusterName` keeps of a source that passed `checkSelectorObjects`. `namespaceOf`: the namespace
 * an object lands in, where the format knows it before placing (a hierarchy's namespace directory;
 * metadata.namespace otherwise).
 */
export function selectForCluster(
  manifests: readonly Manifest[],
  clusterName: string | undefined,
  namespaceOf: (manifest: Manifest) => string | undefined = (m) => m.metadata.namespace,
): ClusterSelection {
  const errors: SourceError[] = [];
  const selectors = new Map<string, Manifest>();
  let cluster: Manifest | undefined;
  let used = false;
  let clusterKinds = false;
  for (const manifest of manifests) {
    const annotations = manifest.metadata.annotations ?? {};
    used ||= SelectorAnnotation.Cluster in annotations || SelectorAnnotation.ClusterName in annotations;
    clusterKinds ||= isClusterKind(manifest);
    if (isSelecting(manifest, HierarchyKind.ClusterSelector)) {
      if (!selectors.has(manifest.metadata.name)) selectors.set(manifest.metadata.name, manifest);
    } else if (isSelecting(manifest, HierarchyKind.Cluster) && clusterName && manifest.metadata.name === clusterName) {
      cluster = manifest;
    }
  }
  if (!used && !clusterKinds) return { manifests, errors };

  const labels = cluster?.metadata.labels ?? {};
  const active = new Map<string, boolean>();
  for (const [name, selector] of selectors) {
    const spec = decodeSelectorSpec(selector);
    if (spec instanceof UnparsableConfigError) {
      errors.push(spec);
      continue;
    }
    const parsed = parseLabelSelector(spec.selector);
    if ("problem" in parsed) {
      errors.push(
        new InvalidSelectorError(`${what(selector)}: ${parsed.problem}`, { resources: [manifestResource(selector)] }),
      );
    } else active.set(name, parsed.matcher(labels));
  }
  if (errors.length > 0) return { manifests: [], errors };

  const state = (manifest: Manifest): boolean | SourceError => {
    const annotations = manifest.metadata.annotations ?? {};
    const legacy = annotations[SelectorAnnotation.Cluster];
    const inline = annotations[SelectorAnnotation.ClusterName];
    if (legacy !== undefined && inline !== undefined) {
      // Config Sync's words lead, then the object and its file.
      const message =
        `Config "${manifest.metadata.name}" MUST declare ONLY ONE cluster-selector annotation, but has both inline ` +
        `annotation "${SelectorAnnotation.ClusterName}" and legacy annotation "${SelectorAnnotation.Cluster}". ` +
        `To fix, remove one of the annotations from: ${what(manifest)}`;
      return new SelectorAnnotationConflictError(message, { resources: [manifestResource(manifest)] });
    }
    if (inline !== undefined) {
      if (!clusterName) return false;
      return inline.split(",").some((name) => name.trim().toLowerCase() === clusterName.toLowerCase());
    }
    if (legacy === undefined) return true;
    const known = active.get(legacy);
    if (known !== undefined) return known;
    const message = `${what(manifest)}: ${SelectorAnnotation.Cluster}: "${legacy}" names no declared ClusterSelector`;
    return new UnknownSelectorError(message, { resources: [manifestResource(manifest)] });
  };

  // Namespaces first: a Namespace declared twice is active if either declaration is.
  const namespaces = new Map<string, boolean>();
  const kept: Manifest[] = [];
  for (const manifest of manifests) {
    if (!isNamespace(manifest)) continue;
    const s = state(manifest);
    if (typeof s !== "boolean") errors.push(s);
    else if (s) kept.push(manifest);
    namespaces.set(manifest.metadata.name, namespaces.get(manifest.metadata.name) === true || s === true);
  }
  for (const manifest of manifests) {
    if (isNamespace(manifest) || isClusterKind(manifest)) continue;
    const namespace = namespaceOf(manifest);
    if (namespace !== undefined && namespaces.get(namespace) === false) continue;
    const s = state(manifest);
    if (typeof s !== "boolean") errors.push(s);
    else if (s) kept.push(manifest);
  }
  if (errors.length > 0) return { manifests: [], errors };
  // Keep reading order (Namespaces were taken first only to decide what they take along).
  const keep = new Set(kept);
  return { manifests: manifests.filter((m) => keep.has(m)), errors };
}

/** A ClusterSelector or Cluster that selection reads (and leaves out); of another version, an ordinary object. */
function isClusterKind(manifest: Manifest): boolean {
  return isSelecting(manifest, HierarchyKind.ClusterSelector) || isSelecting(manifest, HierarchyKind.Cluster);
}

/** By group and kind, whatever the version, as Config Sync's check of these annotations. */
function isSelectorOrCluster(manifest: Manifest): boolean {
  return (
    isKind(manifest, HierarchyKind.Cluster) ||
    isKind(manifest, HierarchyKind.ClusterSelector) ||
    isKind(manifest, HierarchyKind.NamespaceSelector)
  );
}
