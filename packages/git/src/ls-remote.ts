import type { FetchTarget } from "./spec.ts";

/**
 * Reading `git ls-remote` output: which commit does the spec point at on the remote, without
 * fetching anything. With protocol v2 the patterns are sent to the server as ref prefixes, so
 * the answer stays small however many refs the repository has.
 */

/** The patterns to ask for; annotated tags are answered by their peeled `^{}` line. */
export function lsRemotePatterns(target: FetchTarget): readonly string[] {
  // A branch may name a tag too (`refs/tags/v1`), whose commit is its peeled line.
  return target.kind === "commit" ? [] : target.candidates.flatMap((ref) => [ref, `${ref}^{}`]);
}

/** `<sha>\t<ref>` lines into a map from ref to object id. */
export function parseLsRemote(stdout: string): ReadonlyMap<string, string> {
  const refs = new Map<string, string>();
  for (const line of stdout.split("\n")) {
    const match = /^([0-9a-f]{40}|[0-9a-f]{64})\t(\S+)$/.exec(line.trim());
    if (match?.[1] !== undefined && match[2] !== undefined) refs.set(match[2], match[1]);
  }
  return refs;
}

/**
 * The commit the target names, and the ref it came from. ls-remote patterns match ref-name
 * tails (`refs/heads/main` also matches `refs/heads/x/refs/heads/main`), so only exact names count.
 */
export function pickRemoteCommit(
  refs: ReadonlyMap<string, string>,
  target: FetchTarget,
): { readonly commit: string; readonly ref: string } | undefined {
  const candidates = target.kind === "commit" ? [] : target.candidates;
  for (const ref of candidates) {
    // The peeled entry is the commit an annotated tag points at; a lightweight tag has none.
    const commit = refs.get(`${ref}^{}`) ?? refs.get(ref);
    if (commit !== undefined) return { commit, ref };
  }
  return undefined;
}
