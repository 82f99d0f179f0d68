/**
 * The checks of a hierarchical source that need neither the cluster's types nor the tree: directory
 * and name rules, the Repo, Config Sync's own kinds in their directories. Config Sync runs them
 * first and stops on any error; so does driftless.
 */
import type { ErrorResource } from "@driftless/api";
import { shapeProblem } from "./json-shape.ts";
import { isJsonObject } from "./json.ts";
import { UnparsableConfigError, type SourceError } from "./errors.ts";
import {
  IllegalDepthLabelError,
  IllegalNamespaceDeclarationError,
  IllegalTopLevelNamespaceError,
  IncorrectTopLevelDirectoryError,
  MissingRepoError,
  MultipleSingletonsError,
  NamespaceDirectoryMismatchError,
  UnsupportedRepoVersionError,
} from "./hierarchy-errors.ts";
import {
  baseOf,
  DepthLabelSuffix,
  dirOf,
  HierarchyKind,
  isKind,
  isNamespace,
  TopDir,
  topDirOf,
} from "./hierarchy-layout.ts";
import type { Manifest } from "./manifest.ts";
import { describeObject } from "./object-id.ts";

/** Repo spec.version values Config Sync accepts (the current one and the one before). */
const repoVersions = ["1.0.0", "0.1.0"];

export function manifestResource(manifest: Manifest): ErrorResource {
  const { namespace, name } = manifest.metadata;
  return {
    group: manifest.group,
    version: manifest.version,
    kind: manifest.kind,
    ...(namespace !== undefined ? { namespace } : {}),
    name,
    sourcePath: manifest.sourcePath,
  };
}

/** `path: Kind "name"` for the start of a message. */
export function what(manifest: Manifest): string {
  return `${manifest.sourcePath}: ${describeObject({ kind: manifest.kind, ...manifest.metadata })}`;
}

export function checkHierarchyRaw(manifests: readonly Manifest[]): SourceError[] {
  const errors: SourceError[] = [];
  for (const manifest of manifests) {
    const directoryError = checkDirectory(manifest);
    if (directoryError) errors.push(directoryError);
    const depthLabels = Object.keys(manifest.metadata.labels ?? {})
      .filter((key) => key.endsWith(DepthLabelSuffix))
      .sort();
    if (depthLabels.length > 0) {
      errors.push(
        new IllegalDepthLabelError(
          `${what(manifest)}: labels ending in "${DepthLabelSuffix}" are written by the reconciler and must not be declared: ${depthLabels.join(", ")}`,
          { resources: [manifestResource(manifest)] },
        ),
      );
    }
    const registry = isKind(manifest, HierarchyKind.Cluster) || isKind(manifest, HierarchyKind.ClusterSelector);
    if (registry && topDirOf(manifest.sourcePath) !== TopDir.ClusterRegistry) {
      errors.push(misplaced(manifest, TopDir.ClusterRegistry));
    }
  }
  errors.push(...checkRepo(manifests));
  return errors;
}

/**
 * A Namespace lives in a directory of its name below `namespaces/`; any other object that names a
 * namespace names the one of its directory.
 */
function checkDirectory(manifest: Manifest): SourceError | undefined {
  const dir = dirOf(manifest.sourcePath);
  const base = baseOf(dir);
  const details = { resources: [manifestResource(manifest)] };
  if (isNamespace(manifest)) {
    if (base === TopDir.Namespaces)
      return new IllegalTopLevelNamespaceError(
        `${what(manifest)}: a Namespace must be declared in a subdirectory of ${TopDir.Namespaces}/ named after it (${TopDir.Namespaces}/${manifest.metadata.name}/), not in ${TopDir.Namespaces}/ itself`,
        details,
      );
    if (manifest.metadata.name !== base)
      return new NamespaceDirectoryMismatchError(
        `${what(manifest)}: a Namespace's metadata.name must match its directory: expected "${base}" (directory ${dir}/)`,
        details,
      );
    return undefined;
  }
  const namespace = manifest.metadata.namespace;
  if (namespace !== undefined && namespace !== base)
    return new IllegalNamespaceDeclarationError(
      `${what(manifest)}: metadata.namespace must be the directory holding the object, "${base}", or left out`,
      details,
    );
  return undefined;
}

function checkRepo(manifests: readonly Manifest[]): SourceError[] {
  const repos = manifests.filter((m) => isKind(m, HierarchyKind.Repo));
  const [repo, ...more] = repos;
  if (repo === undefined)
    return [
      new MissingRepoError(
        // Config Sync's words, then what to add.
        `The ${TopDir.System}/ directory must declare a Repo Resource. A hierarchical source needs one: apiVersion configmanagement.gke.io/v1, kind Repo, spec.version "1.0.0"`,
        { sourcePaths: [TopDir.System] },
      ),
    ];
  if (more.length > 0)
    return [
      new MultipleSingletonsError(
        `a hierarchical source declares ${repos.length} Repos, in ${repos.map((r) => r.sourcePath).join(", ")}; keep exactly one`,
        { resources: repos.map(manifestResource) },
      ),
    ];
  const spec = repo.raw["spec"];
  // Config Sync decodes the Repo into its type before reading the version (KNV1006 when it cannot).
  const unreadable = shapeProblem("spec", { fields: { version: "string" } }, spec);
  if (unreadable !== undefined) return [unparsableConfig(repo, unreadable)];
  const version = isJsonObject(spec) ? spec["version"] : undefined;
  if (typeof version !== "string" || !repoVersions.includes(version))
    return [
      new UnsupportedRepoVersionError(
        `${what(repo)}: spec.version ${version === undefined ? "is missing" : JSON.stringify(version)}; it must be "1.0.0"`,
        { resources: [manifestResource(repo)] },
      ),
    ];
  return [];
}

/** KNV1039: the object belongs under another top-level directory. */
export function misplaced(manifest: Manifest, expected: TopDir): IncorrectTopLevelDirectoryError {
  const which: Record<TopDir, string> = {
    [TopDir.System]: "Repo and HierarchyConfig objects",
    [TopDir.Cluster]: "cluster-scoped objects other than Namespaces",
    [TopDir.ClusterRegistry]: "Cluster and ClusterSelector objects",
    [TopDir.Namespaces]: "Namespaces, NamespaceSelectors and namespaced objects",
  };
  return new IncorrectTopLevelDirectoryError(
    `${what(manifest)}: ${which[expected]} must be declared in ${expected}/; move this ${manifest.kind} there`,
    { resources: [manifestResource(manifest)] },
  );
}

/**
 * KNV1006 for one of Config Sync's own kinds (a selector, a Repo, a HierarchyConfig) whose value of the
 * wrong type its typed decode refuses. Config Sync's sentence first, as its users match on it; then the
 * object and the field.
 */
export function unparsableConfig(manifest: Manifest, problem: string): UnparsableConfigError {
  const message = `The following config could not be parsed as a ${manifest.group}/${manifest.version}, Kind=${manifest.kind}: ${what(manifest)}: ${problem}`;
  return new UnparsableConfigError(message, { resources: [manifestResource(manifest)] });
}
