/** Both steps in one call: the usual entry point for a reconcile pass. */
import { declareObjects } from "./declare.ts";
import type { DeclareOptions } from "./declare.ts";
import { readManifests } from "./read-manifests.ts";
import type { ReadManifestsOptions } from "./read-manifests.ts";
import type { SourceResult } from "./result.ts";

export type ReadSourceOptions = DeclareOptions & ReadManifestsOptions;

/**
 * Reads, validates and declares every object under `dir` for one sync. Only a result with
 * `complete: true` may be applied or pruned against.
 */
export async function readSource(dir: string, options: ReadSourceOptions): Promise<SourceResult> {
  const set = await readManifests(dir, options);
  return declareObjects(set, options);
}
