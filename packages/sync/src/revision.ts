import type { FetchResult } from "@driftless/git";

/**
 * What a pass declares from: the commit and the folder it was read from. The commit alone is not enough:
 * a Helm chart's version (its commit) stays the same when its values change, and each render lands in
 * a folder of its own, as the render and read caches already key it.
 */
export function revisionOf(fetched: Pick<FetchResult, "commit" | "sourceDir">): string {
  return JSON.stringify([fetched.commit, fetched.sourceDir]);
}
