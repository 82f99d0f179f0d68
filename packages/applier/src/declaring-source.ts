import { posix } from "node:path";
import { Defaults, SourceType, redactUrl, type RSync } from "@driftless/api";

/**
 * Where a sync's declarations come from, as Config Sync writes it on every managed object: the
 * source-path annotation is the file's path from the repository root (the sync's directory
 * included), and the git-context annotation names the repository, branch and revision.
 */
export interface DeclaringSource {
  /** The sync's directory in the repository, as Config Sync reads it: no leading slash, cleaned, `.` for the root. */
  readonly dir: string;
  /** The `configsync.gke.io/git-context` value. */
  readonly gitContext: string;
  /**
   * Set when kustomize rendered the directory. Config Sync reads kustomize's `--output` folder, one
   * file per object named by kustomize, prefixed with the namespace when the output spans several.
   */
  readonly rendered?: { readonly namespacePrefix: boolean };
  /** The `configmanagement.gke.io/cluster-name` value: this cluster's name, when it has one. */
  readonly clusterName?: string;
}

/** What a declared object needs for its path: its id, apiVersion and file relative to the sync's directory. */
export interface DeclaredPath {
  readonly id: { readonly group: string; readonly kind: string; readonly namespace?: string; readonly name: string };
  readonly apiVersion: string;
  readonly sourcePath: string;
}

/**
 * The declaring source of `sync`'s current spec (git, oci or helm, as Config Sync fills each);
 * `rendered` holds the objects kustomize rendered, when it did.
 */
export function declaringSourceOf(
  sync: RSync,
  rendered?: readonly DeclaredPath[],
  clusterName?: string,
): DeclaringSource {
  const namespaces = rendered?.flatMap((o) => (o.id.namespace ? [o.id.namespace] : []));
  return renderedSourceOf(sync, namespaces, clusterName);
}

/**
 * The same from the namespaces of what kustomize rendered (`undefined`: nothing was rendered), all a read
 * that failed can tell: kustomize prefixes its file names with the namespace when there are several.
 */
export function renderedSourceOf(
  sync: RSync,
  renderedNamespaces: readonly string[] | undefined,
  clusterName?: string,
): DeclaringSource {
  const source = { ...unrenderedSourceOf(sync), ...(clusterName ? { clusterName } : {}) };
  if (renderedNamespaces === undefined) return source;
  return { ...source, rendered: { namespacePrefix: new Set(renderedNamespaces).size > 1 } };
}

function unrenderedSourceOf(sync: RSync): DeclaringSource {
  const spec = sync.spec;
  const type = spec.sourceType ?? SourceType.Git;
  if (type === SourceType.Oci && spec.oci !== undefined)
    return { dir: cleanDir(spec.oci.dir), gitContext: gitContextValue({ repo: spec.oci.image }) };
  if (type === SourceType.Helm && spec.helm !== undefined)
    return {
      dir: cleanDir(spec.helm.chart),
      gitContext: gitContextValue({ repo: spec.helm.repo, rev: spec.helm.version || "latest" }),
    };
  const git = spec.git;
  return {
    dir: cleanDir(git?.dir),
    gitContext: gitContextValue({
      repo: git?.repo ?? "",
      branch: git?.branch || Defaults.gitBranch,
      rev: git?.revision || Defaults.gitRevision,
    }),
  };
}

/** Config Sync strips a leading `/` (users write the repository root as `/`) and cleans the rest. */
function cleanDir(dir: string | undefined): string {
  const trimmed = (dir ?? "").replace(/^\//, "");
  return trimmed === "" ? "." : posix.normalize(trimmed).replace(/\/$/, "") || ".";
}

/**
 * A declaring file's path from the repository root: `<dir>/<path relative to dir>`, cleaned; for a
 * rendered directory, `<dir>/<the file kustomize writes the object to>`.
 */
export function sourcePathFromRoot(source: DeclaringSource, declared: DeclaredPath): string {
  if (source.rendered === undefined) return posix.join(source.dir, declared.sourcePath);
  return posix.join(source.dir, kustomizeFileName(declared, source.rendered.namespacePrefix));
}

/** kustomize build --output's name: `[<namespace>_][<group>_]<version>_<kind>_<name>.yaml`, lowercased. */
function kustomizeFileName(declared: DeclaredPath, namespacePrefix: boolean): string {
  const gvk = [declared.id.group, declared.apiVersion.slice(declared.apiVersion.lastIndexOf("/") + 1), declared.id.kind]
    .filter((part) => part !== "")
    .join("_");
  const name = `${gvk}_${declared.id.name}.yaml`;
  const namespace = declared.id.namespace ?? "";
  return (namespacePrefix && namespace !== "" ? `${namespace}_${name}` : name).toLowerCase();
}

/**
 * The git-context JSON as Go's encoding/json writes Config Sync's struct: keys in the order
 * repo, branch, rev; empty branch and rev left out; `<`, `>`, `&`, U+2028 and U+2029 escaped.
 * Credentials in the URL are masked, as everywhere else driftless writes the repository.
 */
export function gitContextValue(context: { readonly repo: string; readonly branch?: string; readonly rev?: string }) {
  const fields: Record<string, string> = { repo: redactUrl(context.repo) };
  if (context.branch) fields["branch"] = context.branch;
  if (context.rev) fields["rev"] = context.rev;
  return JSON.stringify(fields).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** Equal declaring sources decorate objects alike. */
export function sameDeclaringSource(a: DeclaringSource | undefined, b: DeclaringSource | undefined): boolean {
  return (
    a === b ||
    (a !== undefined &&
      b !== undefined &&
      a.dir === b.dir &&
      a.gitContext === b.gitContext &&
      a.clusterName === b.clusterName &&
      a.rendered?.namespacePrefix === b.rendered?.namespacePrefix)
  );
}
