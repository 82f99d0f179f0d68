import { knvErrorText, type SourceFormat } from "@driftless/api";
import {
  clustersToCheck,
  declareForClusters,
  mergeClusterErrors,
  ObjectCountError,
  objectKey,
  readManifests,
  sourceFormatFor,
  type ClusterError,
  type ClusterName,
  type ClusterResult,
  type SourceError,
  type SyncScope,
} from "@driftless/source";
import { printableLine } from "../terminal-text.ts";
import { kindsOrReport } from "./api-resources.ts";

export interface VetOptions {
  readonly format: SourceFormat;
  readonly scope: SyncScope;
  /**
   * The clusters to check (`--clusters`, as nomos: only those the source declares, so an unknown name checks
   * nothing); undefined: every cluster the source names, and one without a name.
   */
  readonly clusters?: readonly string[];
  /** `--threshold`: the most objects a cluster may get (KNV1070 beyond); undefined: no limit. */
  readonly maxObjects?: number;
}

/**
 * `driftless vet DIR`: every check the reconciler runs on a source that needs no cluster (parse,
 * names, namespaces, depends-on syntax, scope, the hierarchy rules, duplicates after inheritance),
 * with Config Sync's codes and file paths, for every cluster the source names and for a cluster
 * without a name, as `nomos vet` checks it; an error found for some clusters only names them. Kinds
 * beyond the built-in ones and those api-resources.txt lists are not checked against a cluster. Errors
 * go to `err` (stderr, as nomos prints them), and so does nomos's `✅ No validation issues found.` when
 * there are none; driftless's summary goes to `out`. Exit 1 when anything is wrong.
 */
export async function vet(
  dir: string,
  options: VetOptions,
  out: (line: string) => void,
  err: (line: string) => void = out,
): Promise<number> {
  const format = sourceFormatFor(options.scope, options.format);
  const kinds = await kindsOrReport(dir, err);
  if (kinds === undefined) return 1;
  const declareOptions = { scope: options.scope, kinds, format, allowUnknownKinds: true };
  const set = await readManifests(dir, { format });
  const clusters = clustersToCheck(set, options.clusters);
  const declared = await declareForClusters(set, declareOptions, clusters);
  const results = declared.map((cluster) => withinCount(cluster, options.maxObjects));
  const errors = mergeClusterErrors(results);
  printClusterErrors(errors, err);
  const objects = new Set(
    results.flatMap(({ result }) =>
      (result.complete ? result.objects : result.partialObjects).map((o) => objectKey(o.id)),
    ),
  );
  const checked =
    clusters.length === 0
      ? ", no cluster checked: the source declares none of --clusters"
      : clusters.length > 1
        ? `, for ${describeClusters(clusters)}`
        : "";
  out(
    `${set.fileCount} file(s), ${objects.size} object(s), ${set.localConfigSkipped} local-config skipped, ${errors.length} error(s)${checked}`,
  );
  const valid = results.every(({ result }) => result.complete);
  // nomos's line, on the stream nomos prints it to: scripts and Config Sync's e2e checks read it.
  if (valid) err(NoIssuesFound);
  return valid ? 0 : 1;
}

/** What `nomos vet` prints (on stderr) for a source without errors. */
export const NoIssuesFound = "✅ No validation issues found.";

/** A cluster that gets more than `max` objects fails with KNV1070, as nomos's final check. */
function withinCount(cluster: ClusterResult, max: number | undefined): ClusterResult {
  const { result } = cluster;
  if (max === undefined || !result.complete || result.objects.length <= max) return cluster;
  const { objects, fileCount, localConfigSkipped } = result;
  const error = new ObjectCountError(objects.length, max);
  return {
    ...cluster,
    result: {
      complete: false,
      isEmpty: false,
      errors: [error],
      partialObjects: objects,
      fileCount,
      localConfigSkipped,
    },
  };
}

/**
 * `KNVxxxx: message (files)`, then Config Sync's link to the code's page, as nomos prints an error. The message
 * is one line as driftless builds it: a line break in it, or in a path, came from a file or object name and is
 * escaped, so a repository cannot print lines that read as vet's own.
 */
export function formatError(error: SourceError): string {
  return knvErrorText(error.code, `${printableLine(error.message)}${filesOf(error)}`);
}

/** ` (a.yaml, b.yaml)`: the files an error concerns. */
function filesOf(error: SourceError): string {
  return error.sourcePaths.length > 0 ? ` (${error.sourcePaths.map(printableLine).join(", ")})` : "";
}

/** An error with the clusters it concerns, when not all (nomos says `errors for cluster "prod"`). */
export function formatClusterError({ error, clusters }: ClusterError): string {
  if (clusters === undefined) return formatError(error);
  return knvErrorText(
    error.code,
    `for ${describeClusters(clusters)}: ${printableLine(error.message)}${filesOf(error)}`,
  );
}

/** Each error, a blank line between two (each ends with its link, as in nomos's list). */
export function printClusterErrors(errors: readonly ClusterError[], err: (line: string) => void): void {
  errors.forEach((error, i) => {
    if (i > 0) err("");
    err(formatClusterError(error));
  });
}

/** `cluster "a"`, `clusters "a", "b" and a cluster without a name`. */
function describeClusters(clusters: readonly ClusterName[]): string {
  const named = clusters.flatMap((c) => (c === undefined ? [] : [JSON.stringify(c)]));
  const parts = [
    ...(named.length === 0 ? [] : [`${named.length === 1 ? "cluster" : "clusters"} ${named.join(", ")}`]),
    ...(clusters.includes(undefined) ? ["a cluster without a name"] : []),
  ];
  return parts.join(" and ");
}
