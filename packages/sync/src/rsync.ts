import { ConfigSyncGroup, ConfigSyncVersion, Kind, Plural, parseSync, type RSync } from "@driftless/api";
import type { KubeClient, KubeObject, ResourceMapping } from "@driftless/kube";
import type { SyncIdentity } from "@driftless/applier";

const verbs = ["get", "list", "watch", "create", "update", "patch", "delete"] as const;

export function rsyncMapping(kind: SyncIdentity["kind"]): ResourceMapping {
  return {
    group: ConfigSyncGroup,
    version: ConfigSyncVersion.V1Beta1,
    kind: kind === "RootSync" ? Kind.RootSync : Kind.RepoSync,
    resource: kind === "RootSync" ? Plural.RootSync : Plural.RepoSync,
    namespaced: true,
    verbs,
  };
}

export const secretMapping: ResourceMapping = {
  group: "",
  version: "v1",
  kind: "Secret",
  resource: "secrets",
  namespaced: true,
  verbs,
};
export { namespaceMapping } from "@driftless/kube";

/** The live RSync object (raw, for writes) and its parsed, defaulted form (for decisions). */
export interface LoadedSync {
  readonly raw: KubeObject;
  readonly sync: RSync | undefined;
  /** Validation problems with the spec (KNV1061); the pass reports them and stops. */
  readonly invalid: readonly Error[];
}

/** What a watch of the sync knows of it: the object, absent (deleted), or nothing yet (own-sync-watch.ts). */
export type WatchedSync = { readonly known: true; readonly object: KubeObject | undefined } | { readonly known: false };

/** The RSync from the watch of it when that has listed (own-sync-watch.ts), else read from the API server. */
export async function loadSync(
  client: KubeClient,
  identity: SyncIdentity,
  watched?: () => WatchedSync,
): Promise<LoadedSync | undefined> {
  const seen = watched?.();
  const raw =
    seen?.known === true
      ? seen.object
      : await client.get(rsyncMapping(identity.kind), identity.namespace, identity.name);
  if (raw === undefined) return undefined;
  const parsed = parseSync(raw);
  return parsed.ok ? { raw, sync: parsed.value, invalid: [] } : { raw, sync: undefined, invalid: parsed.errors };
}
