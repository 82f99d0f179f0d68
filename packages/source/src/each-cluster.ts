/**
 * A source declared for several clusters at once, as `nomos vet` and `nomos hydrate` check it: cluster
 * selection is the only step that differs between clusters, so one read serves them all, and each
 * cluster runs the reconciler's own `declareObjects` with its name.
 */
import { clusterNamesIn } from "./cluster-selection.ts";
import { declareObjects } from "./declare.ts";
import type { DeclareOptions } from "./declare-object.ts";
import type { SourceError } from "./errors.ts";
import type { ManifestSet, SourceResult } from "./result.ts";

/** A cluster's name; undefined for a cluster without one (nomos's `defaultcluster`). */
export type ClusterName = string | undefined;

/**
 * The name nomos gives the cluster without one: its folder, the name in its errors, what `--clusters`
 * matches, and the name its cluster selectors are evaluated against (a `cluster-name-selector` listing it
 * selects that cluster; a Cluster object of that name gives it labels).
 */
export const UnnamedClusterName = "defaultcluster";

/**
 * Every cluster the source names (its Cluster objects and cluster-name selectors) and a cluster without
 * a name; with `clusters` (`--clusters`), those of them it lists, as nomos filters them: a name the source
 * does not declare is skipped, so none may be left ("" entries dropped; none given: a cluster without a name).
 * `defaultcluster` names the cluster without a name, as in nomos (and a declared cluster of that name too).
 */
export function clustersToCheck(set: ManifestSet, clusters?: readonly string[]): ClusterName[] {
  const known = clusterNamesIn(set.manifests);
  if (clusters === undefined) return [...known, undefined];
  const named = [...new Set(clusters.filter((name) => name !== ""))];
  if (named.length === 0) return [undefined];
  return named.flatMap((name) => {
    const declared = known.includes(name) ? [name] : [];
    return name === UnnamedClusterName ? [undefined, ...declared] : declared;
  });
}

export interface ClusterResult {
  readonly cluster: ClusterName;
  readonly result: SourceResult;
}

/**
 * `declareObjects` for each cluster, in the order given; the cluster without a name is selected for as
 * nomos names it (`defaultcluster`), where the reconciler, which has no such name, selects by none.
 */
export async function declareForClusters(
  set: ManifestSet,
  options: Omit<DeclareOptions, "clusterName">,
  clusters: readonly ClusterName[],
): Promise<ClusterResult[]> {
  const results: ClusterResult[] = [];
  for (const cluster of clusters)
    results.push({
      cluster,
      result: await declareObjects(set, { ...options, clusterName: cluster ?? UnnamedClusterName }),
    });
  return results;
}

export interface ClusterError {
  readonly error: SourceError;
  /** The clusters it was found for; undefined when found for every cluster checked. */
  readonly clusters?: readonly ClusterName[];
}

/**
 * Every error of every cluster, once: an error found for several clusters (same code, message and
 * files) is listed once, with the clusters it concerns unless it concerns them all. First-seen order.
 */
export function mergeClusterErrors(results: readonly ClusterResult[]): ClusterError[] {
  const byKey = new Map<string, { error: SourceError; clusters: ClusterName[] }>();
  for (const { cluster, result } of results)
    for (const error of result.errors) {
      const key = JSON.stringify([error.code, error.message, error.sourcePaths]);
      const seen = byKey.get(key);
      if (seen === undefined) byKey.set(key, { error, clusters: [cluster] });
      else if (!seen.clusters.includes(cluster)) seen.clusters.push(cluster);
    }
  return [...byKey.values()].map(({ error, clusters }) =>
    clusters.length === results.length ? { error } : { error, clusters },
  );
}
