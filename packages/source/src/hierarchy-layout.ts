/**
 * The layout of a hierarchical repository (Config Sync's `sourceFormat: hierarchy`): four top-level
 * directories, and Config Sync's own kinds that configure the hierarchy instead of being applied.
 */
import type { Manifest } from "./manifest.ts";

export const TopDir = {
  /** Repo and HierarchyConfig. */
  System: "system",
  /** Cluster-scoped objects, except Namespaces. */
  Cluster: "cluster",
  /** Cluster and ClusterSelector. */
  ClusterRegistry: "clusterregistry",
  /** Namespaces, one directory each, and everything namespaced; other directories are abstract namespaces. */
  Namespaces: "namespaces",
} as const;
export type TopDir = (typeof TopDir)[keyof typeof TopDir];

const topDirs: ReadonlySet<string> = new Set(Object.values(TopDir));

/** Config Sync reads only files below the four top-level directories; anything else (a README.yaml at the root) is ignored. */
export function isHierarchyFile(sourcePath: string): boolean {
  const slash = sourcePath.indexOf("/");
  return slash > 0 && topDirs.has(sourcePath.slice(0, slash));
}

/** Config Sync's kinds that shape the hierarchy; they are read, never applied. */
export const HierarchyKind = {
  Repo: { group: "configmanagement.gke.io", kind: "Repo" },
  HierarchyConfig: { group: "configmanagement.gke.io", kind: "HierarchyConfig" },
  NamespaceSelector: { group: "configmanagement.gke.io", kind: "NamespaceSelector" },
  ClusterSelector: { group: "configmanagement.gke.io", kind: "ClusterSelector" },
  Cluster: { group: "clusterregistry.k8s.io", kind: "Cluster" },
} as const;
export type HierarchyKind = (typeof HierarchyKind)[keyof typeof HierarchyKind];

export function isKind(manifest: Pick<Manifest, "group" | "kind">, kind: { group: string; kind: string }): boolean {
  return manifest.group === kind.group && manifest.kind === kind.kind;
}

/** The only version at which Config Sync selects by, or selects with, these kinds. */
const selectingVersion: ReadonlyMap<HierarchyKind, string> = new Map<HierarchyKind, string>([
  [HierarchyKind.NamespaceSelector, "v1"],
  [HierarchyKind.ClusterSelector, "v1"],
  [HierarchyKind.Cluster, "v1alpha1"],
]);

/**
 * Whether this is a selector (or Cluster) that selection reads. Config Sync's checks (names, directories,
 * annotations) go by group and kind, but its selection by group, version and kind: a
 * `configmanagement.gke.io/v2` ClusterSelector is an ordinary object there, and objects naming it are KNV1013.
 */
export function isSelecting(
  manifest: Pick<Manifest, "group" | "version" | "kind">,
  kind: typeof HierarchyKind.NamespaceSelector | typeof HierarchyKind.ClusterSelector | typeof HierarchyKind.Cluster,
): boolean {
  return isKind(manifest, kind) && manifest.version === selectingVersion.get(kind);
}

export function isNamespace(manifest: Pick<Manifest, "group" | "kind">): boolean {
  return manifest.group === "" && manifest.kind === "Namespace";
}

/** Which of Config Sync's own kinds this is, if any. */
export function hierarchyKindOf(manifest: Pick<Manifest, "group" | "version" | "kind">): HierarchyKind | undefined {
  if (manifest.group !== HierarchyKind.Repo.group && manifest.group !== HierarchyKind.Cluster.group) return undefined;
  const kind = Object.values(HierarchyKind).find((k) => isKind(manifest, k));
  // A selector or Cluster of another version is an object like any other (see isSelecting).
  const version = kind === undefined ? undefined : selectingVersion.get(kind);
  return version === undefined || version === manifest.version ? kind : undefined;
}

/** Directory of a file ("namespaces/a/b" for "namespaces/a/b/x.yaml"). */
export function dirOf(sourcePath: string): string {
  const slash = sourcePath.lastIndexOf("/");
  return slash < 0 ? "" : sourcePath.slice(0, slash);
}

/** Last segment of a path. */
export function baseOf(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

export function topDirOf(sourcePath: string): string {
  const slash = sourcePath.indexOf("/");
  return slash < 0 ? "" : sourcePath.slice(0, slash);
}

/** Label suffix Config Sync writes on hierarchy Namespaces (one label per ancestor directory, valued with the distance). */
export const DepthLabelSuffix = ".tree.hnc.x-k8s.io/depth";
/** Annotation Config Sync writes on hierarchy Namespaces, valued `configmanagement.gke.io`. */
export const HncManagedByAnnotation = "hnc.x-k8s.io/managed-by";
/** Where Config Sync keeps a declared `hnc.x-k8s.io/managed-by` value it replaced. */
export const OriginalHncManagedByAnnotation = "configsync.gke.io/original-hnc-managed-by-value";
