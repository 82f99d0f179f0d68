/** `TYPE NAME` and `TYPE/NAME` as kubectl reads them, for the verbs that act on one sync. */
import { RootSyncNamespace } from "@driftless/api";
import type { SyncKind, SyncRef } from "./sync-objects.ts";

const kinds: Readonly<Record<string, SyncKind>> = {
  rootsync: "RootSync",
  rootsyncs: "RootSync",
  "rootsync.configsync.gke.io": "RootSync",
  "rootsyncs.configsync.gke.io": "RootSync",
  reposync: "RepoSync",
  reposyncs: "RepoSync",
  "reposync.configsync.gke.io": "RepoSync",
  "reposyncs.configsync.gke.io": "RepoSync",
};

export class SyncArgsError extends Error {}

/**
 * The sync named by `args` (`["rootsync", "NAME"]` or `["rootsync/NAME"]`). Without `-n` a RootSync is
 * looked for in config-management-system, the only namespace Config Sync reads them from, and a RepoSync,
 * as kubectl would, in the kubeconfig context's namespace (`contextNamespace`), else in `default`.
 */
export function parseSyncArgs(
  args: readonly string[],
  namespace: string | undefined,
  contextNamespace?: string,
): SyncRef {
  const [first, second, ...rest] = args;
  if (first === undefined) throw new SyncArgsError("name a sync: rootsync NAME, reposync NAME or TYPE/NAME");
  const slash = first.indexOf("/");
  const [type, name] = slash === -1 ? [first, second] : [first.slice(0, slash), first.slice(slash + 1)];
  const extra = slash === -1 ? rest : [second, ...rest].filter((a) => a !== undefined);
  if (extra.length > 0) throw new SyncArgsError(`one sync at a time; unexpected ${JSON.stringify(extra[0])}`);
  const kind = kinds[type.toLowerCase()];
  if (kind === undefined) throw new SyncArgsError(`${JSON.stringify(type)} is not rootsync or reposync`);
  if (name === undefined || name === "") throw new SyncArgsError(`${type} needs a NAME`);
  return {
    kind,
    name,
    namespace: namespace ?? (kind === "RootSync" ? RootSyncNamespace : (contextNamespace ?? "default")),
  };
}
