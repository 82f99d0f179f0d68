/** The ResourceGroup metrics of one sync, from the status its group reports now. */
import type { ResourceStatusEntry, SyncIdentity } from "@driftless/applier";
import { ResourceStatusLabel, type Metrics } from "@driftless/metrics";

const statusLabels = Object.values(ResourceStatusLabel);

/**
 * Counts as Config Sync's ResourceGroup controller counts them (objects, Current ones, namespaces,
 * cluster-scoped, CRDs, Config Connector), plus entries per kstatus and the group's size in bytes.
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
    if (entry.group.endsWith("cnrm.cloud.google.com")) kcc++;
  }
  m.resourceCount.set({ resourcegroup }, statuses.length);
  m.readyResourceCount.set({ resourcegroup }, byStatus.get(ResourceStatusLabel.Current) ?? 0);
  m.resourceNamespaceCount.set({ resourcegroup }, namespaces.size);
  m.clusterScopedResourceCount.set({ resourcegroup }, clusterScoped);
  m.crdCount.set({ resourcegroup }, crds);
  m.kccResourceCount.set({ resourcegroup }, kcc);
  for (const status of statusLabels) m.resourceStatusCount.set({ resourcegroup, status }, byStatus.get(status) ?? 0);
  m.resourceGroupBytes.set({ resourcegroup }, bytes);
}
