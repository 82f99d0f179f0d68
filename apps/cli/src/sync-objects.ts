/** The RootSync and RepoSync resources as the CLI reads and changes them (status, the verbs, the console). */
import type { KubeObject, ResourceMapping } from "@driftless/kube";

const verbs = ["get", "list", "watch", "patch"] as const;

export const rootSyncMapping: ResourceMapping = {
  group: "configsync.gke.io",
  version: "v1beta1",
  kind: "RootSync",
  resource: "rootsyncs",
  namespaced: true,
  verbs,
};
export const repoSyncMapping: ResourceMapping = {
  group: "configsync.gke.io",
  version: "v1beta1",
  kind: "RepoSync",
  resource: "reposyncs",
  namespaced: true,
  verbs,
};
export const syncMappings: readonly ResourceMapping[] = [rootSyncMapping, repoSyncMapping];

export type SyncKind = "RootSync" | "RepoSync";

/** Which sync: the kind, its namespace and name. */
export interface SyncRef {
  readonly kind: SyncKind;
  readonly namespace: string;
  readonly name: string;
}

export function mappingOf(kind: SyncKind): ResourceMapping {
  return kind === "RootSync" ? rootSyncMapping : repoSyncMapping;
}

/** A ResourceGroup that does not exist (yet): a sync with no managed objects to show. */
export const emptyGroup = {
  apiVersion: "kpt.dev/v1alpha1",
  kind: "ResourceGroup",
  metadata: { name: "" },
} as KubeObject;

/** By namespace, then name: the order every view lists syncs in. */
export function sorted(items: readonly KubeObject[]): KubeObject[] {
  const key = (o: KubeObject): string => `${o.metadata.namespace ?? ""}/${o.metadata.name}`;
  return [...items].sort((a, b) => key(a).localeCompare(key(b)));
}
