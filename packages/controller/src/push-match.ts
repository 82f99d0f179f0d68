/**
 * Which syncs a push concerns: same repository (any URL form), and a ref they follow (a branch, or a
 * tag for a tag push); for a registry push, OCI syncs whose spec.oci.image names the pushed repository
 * and tag, and Helm syncs whose oci:// chart is that repository (any tag: their version may be a range).
 */
import { Defaults, parseSync, SourceType, withoutTrailingSlashes, type RSync } from "@driftless/api";
import { parseImageReference } from "@driftless/oci";
import type { KubeObject } from "@driftless/kube";
import type { SyncRef } from "@driftless/queue";
import { maxSourceUrlLength, repoKey } from "./repo-url.ts";
import type { Push } from "./webhook-push.ts";

export interface PushMatch {
  readonly syncs: readonly SyncRef[];
  /** Syncs skipped because their `spec.git.repo` cannot be read; one bad sync never fails a push for the others. */
  readonly unreadable: readonly { readonly sync: SyncRef; readonly repo: string }[];
}

/** What a sync waits for, read from its spec once. */
type Follows =
  | {
      readonly source: "git";
      readonly repo: string;
      /** undefined when the URL cannot be read. */
      readonly key: string | undefined;
      /** Full ref names (`refs/heads/main`, `refs/tags/v1`) a push of which may move the sync. */
      readonly refs: ReadonlySet<string>;
    }
  | {
      readonly source: "image";
      /** `host/repository`, as a registry notification names it. */
      readonly repository: string;
      /** The tag followed; undefined for any tag. */
      readonly tag: string | undefined;
    };

interface Listener {
  readonly ref: SyncRef;
  readonly follows: Follows;
}

/**
 * Informers replace a sync's object on every change, so an object's listener never goes stale; each push
 * then costs a set lookup per sync instead of parsing every spec and URL again.
 */
const listeners = new WeakMap<KubeObject, Listener | null>();

export function syncsForPush(syncs: readonly KubeObject[], push: Push): PushMatch {
  const keys = new Set(push.repoUrls.map(repoKey).filter((key) => key !== undefined));
  const pushedRef = `${push.tag === true ? "refs/tags/" : "refs/heads/"}${push.branch}`;
  const matched: SyncRef[] = [];
  const unreadable: { sync: SyncRef; repo: string }[] = [];
  for (const raw of syncs) {
    if (raw.metadata.deletionTimestamp !== undefined) continue;
    const listener = listenerOf(raw);
    if (listener === undefined) continue;
    const { ref, follows } = listener;
    if (follows.source === "image") {
      if (push.image === true && followsImage(follows, push)) matched.push(ref);
      continue;
    }
    if (push.image === true) continue;
    if (follows.key === undefined) unreadable.push({ sync: ref, repo: follows.repo });
    else if (keys.has(follows.key) && follows.refs.has(pushedRef)) matched.push(ref);
  }
  return { syncs: matched, unreadable };
}

function listenerOf(raw: KubeObject): Listener | undefined {
  let listener = listeners.get(raw);
  if (listener === undefined) {
    listener = readListener(raw) ?? null;
    listeners.set(raw, listener);
  }
  return listener ?? undefined;
}

function readListener(raw: KubeObject): Listener | undefined {
  const parsed = parseSync(raw);
  if (!parsed.ok) return undefined;
  const sync = parsed.value;
  const follows = followsOf(sync);
  if (follows === undefined) return undefined;
  return { ref: { kind: sync.kind, namespace: sync.metadata.namespace ?? "", name: sync.metadata.name }, follows };
}

function followsOf(sync: RSync): Follows | undefined {
  const { git, oci, helm } = sync.spec;
  switch (sync.spec.sourceType) {
    case SourceType.Oci:
      return oci === undefined ? undefined : followedImage(oci.image);
    case SourceType.Helm:
      return helm === undefined ? undefined : followedChart(helm.repo, helm.chart);
    default:
      if (git === undefined) return undefined;
      return { source: "git", repo: git.repo, key: repoKey(git.repo), refs: refsFollowed(git.branch, git.revision) };
  }
}

/**
 * The refs the Git fetcher tries for the sync's branch or revision (as packages/git resolves them: a
 * name may be a branch, `refs/<name>` or a tag); a commit SHA never moves.
 */
function refsFollowed(branch: string | undefined, revision: string | undefined): ReadonlySet<string> {
  const pinned = revision === undefined || revision === "" || revision === Defaults.gitRevision ? undefined : revision;
  if (pinned === undefined) {
    const name = branch === undefined || branch === "" ? Defaults.gitBranch : branch;
    return new Set(name.startsWith("refs/") ? [name] : [`refs/heads/${name}`, `refs/${name}`, `refs/tags/${name}`]);
  }
  if (/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i.test(pinned)) return new Set();
  return new Set(
    pinned.startsWith("refs/") ? [pinned] : [`refs/${pinned}`, `refs/tags/${pinned}`, `refs/heads/${pinned}`],
  );
}

/** An image pinned by digest never moves; one by tag moves when that tag of that repository is pushed. */
function followedImage(image: string): Follows | undefined {
  if (image.length > maxSourceUrlLength) return undefined;
  try {
    const reference = parseImageReference(image);
    if (reference.digest !== undefined) return undefined;
    return { source: "image", repository: `${reference.registry}/${reference.repository}`, tag: reference.tag };
  } catch {
    return undefined; // an unreadable image is reported on the sync's own status by its reconciler
  }
}

/** An oci:// chart is the image `<repo>/<chart>`: helm pulls any of its tags that satisfies the version. */
function followedChart(repo: string, chart: string): Follows | undefined {
  const scheme = "oci://";
  if (!repo.startsWith(scheme) || repo.length > maxSourceUrlLength) return undefined;
  return {
    source: "image",
    repository: `${withoutTrailingSlashes(repo.slice(scheme.length))}/${chart}`,
    tag: undefined,
  };
}

function followsImage(follows: Extract<Follows, { source: "image" }>, push: Push): boolean {
  return (follows.tag === undefined || follows.tag === push.branch) && push.repoUrls.includes(follows.repository);
}
