/** The ResourceGroup metrics of one sync, from the status its group reports now. */
import type { ResourceStatusEntry, SyncIdentity } from "@driftless/applier";
import { ResourceStatusLabel, type Metrics } from "@driftless/metrics";
import { pipelineLabels } from "./pass-metrics.ts";

const statusLabels = Object.values(ResourceStatusLabel);

/** A Config Connector object: its readiness counts even while it is only InProgress. */
const isConfigConnector = (group: string): boolean => group.endsWith("cnrm.cloud.google.com");

/**
 * Config Sync's ResourceGroup controller's readiness error: some entry is Failed, or is a Config
 * Connector object that is not Current.
 */
export function readinessFailed(statuses: readonly ResourceStatusEntry[]): boolean {
  return statuses.some(
    (entry) =>
      entry.status === ResourceStatusLabel.Failed ||
      (isConfigConnector(entry.group) && entry.status !== ResourceStatusLabel.Current),
  );
}

/**
 * Counts as Config Sync's ResourceGroup controller counts them (objects, Current ones, namespaces,
 * cluster-scoped, CRDs, Config Connector) and records its pipeline_error_observed{component="readiness"},
 * plus entries per kstatus and the group's size in bytes.
 */
export function recordResourceGroupMetrics(
  m: Metrics,
  identity: SyncIdentity,
  statuses: readonly ResourceStatusEntry[],
  bytes: number,
): void {
  const resourcegroup = `${identity.namespace}/${identity.name}`;
  const byStatus = new Map<string, number>();
  const namespaces = new Set<string>();
  let clusterScoped = 0;
  let crds = 0;
  let kcc = 0;
  for (const entry of statuses) {
    byStatus.set(entry.status, (byStatus.get(entry.status) ?? 0) + 1);
    const namespace = entry.namespace ?? "";
    namespaces.add(namespace);
    if (namespace === "") clusterScoped++;
    if (entry.kind === "CustomResourceDefinition") crds++;
    if (isConfigConnector(entry.group)) kcc++;
  }
  m.resourceCount.set({ resourcegroup }, statuses.length);
  m.readyResourceCount.set({ resourcegroup }, byStatus.get(ResourceStatusLabel.Current) ?? 0);
  m.resourceNamespaceCount.set({ resourcegroup }, namespaces.size);
  m.clusterScopedResourceCount.set({ resourcegroup }, clusterScoped);
  m.crdCount.set({ resourcegroup }, crds);
  m.kccResourceCount.set({ resourcegroup }, kcc);
  for (const status of statusLabels) m.resourceStatusCount.set({ resourcegroup, status }, byStatus.get(status) ?? 0);
  m.resourceGroupBytes.set({ resourcegroup }, bytes);
  m.pipelineErrorObserved.set(
    { ...pipelineLabels(identity), component: "readiness" },
    readinessFailed(statuses) ? 1 : 0,
  );
}
