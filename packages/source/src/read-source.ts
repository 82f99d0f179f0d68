/** Both steps in one call: the usual entry point for a reconcile pass. */
import { SourceFormat } from "@driftless/api";
import { declareObjects } from "./declare.ts";
import type { DeclareOptions } from "./declare.ts";
import { readManifests } from "./read-manifests.ts";
import type { ReadManifestsOptions } from "./read-manifests.ts";
import type { SourceResult } from "./result.ts";
import type { SyncScope } from "./scope.ts";

export type ReadSourceOptions = DeclareOptions & ReadManifestsOptions;

/**
 * Reads, validates and declares every object under `dir` for one sync. Only a result with
 * `complete: true` may be applied or pruned against.
 */
export async function readSource(dir: string, options: ReadSourceOptions): Promise<SourceResult> {
  const format = sourceFormatFor(options.scope, options.format);
  const set = await readManifests(dir, { ...options, format });
  return declareObjects(set, { ...options, format });
}

/** A RepoSync's source is unstructured whatever its spec says, as in Config Sync. */
export function sourceFormatFor(scope: SyncScope, format: SourceFormat | undefined): SourceFormat {
  return scope.kind === "RootSync" && format === SourceFormat.Hierarchy
    ? SourceFormat.Hierarchy
    : SourceFormat.Unstructured;
}
