/** The kinds the demo reads and writes (built-in or our CRDs: no discovery needed). */
import type { ResourceMapping } from "@driftless/kube";

const mapping = (group: string, kind: string, resource: string, namespaced: boolean): ResourceMapping => ({
  group,
  version: group === "" ? "v1" : "v1beta1",
  kind,
  resource,
  namespaced,
  verbs: [],
});

export const rootSyncs = mapping("configsync.gke.io", "RootSync", "rootsyncs", true);
export const repoSyncs = mapping("configsync.gke.io", "RepoSync", "reposyncs", true);
export const namespaces = mapping("", "Namespace", "namespaces", false);
export const configMaps = mapping("", "ConfigMap", "configmaps", true);
