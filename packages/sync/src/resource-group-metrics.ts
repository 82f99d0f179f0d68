/** The ResourceGroup metrics of one sync, from the status its group reports now. */
import type { ResourceStatusEntry, SyncIdentity } from "@driftless/applier";
import {
  ResourceStatusLabel,
  type InventoryCountMetrics,
  type Metrics,
  type ResourceGroupMetrics,
} from "@driftless/metrics";
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

/** The handles the counts of one group go to (a reconciler's registry, or the resource-group-controller's). */
export type GroupCountMetrics = InventoryCountMetrics &
  Pick<
    ResourceGroupMetrics,
    "resourceNamespaceCount" | "clusterScopedResourceCount" | "crdCount" | "kccResourceCount" | "resourceStatusCount"
  >;

/** An entry of status.resourceStatuses, as far as counting reads it. */
export interface CountedEntry {
  readonly group: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly status: string;
}

/**
 * Counts as Config Sync's ResourceGroup controller counts them (objects, Current ones, namespaces,
 * cluster-scoped, CRDs, Config Connector), plus entries per kstatus; `resourcegroup` is `<namespace>/<name>`.
 */
export function recordGroupCounts(m: GroupCountMetrics, resourcegroup: string, entries: readonly CountedEntry[]): void {
  const byStatus = new Map<string, number>();
  const namespaces = new Set<string>();
  let clusterScoped = 0;
  let crds = 0;
  let kcc = 0;
  for (const entry of entries) {
    byStatus.set(entry.status, (byStatus.get(entry.status) ?? 0) + 1);
    const namespace = entry.namespace ?? "";
    namespaces.add(namespace);
    if (namespace === "") clusterScoped++;
    if (entry.kind === "CustomResourceDefinition") crds++;
    if (isConfigConnector(entry.group)) kcc++;
  }
  m.resourceCount.set({ resourcegroup }, entries.length);
  m.readyResourceCount.set({ resourcegroup }, byStatus.get(ResourceStatusLabel.Current) ?? 0);
  m.resourceNamespaceCount.set({ resourcegroup }, namespaces.size);
  m.clusterScopedResourceCount.set({ resourcegroup }, clusterScoped);
  m.crdCount.set({ resourcegroup }, crds);
  m.kccResourceCount.set({ resourcegroup }, kcc);
  for (const status of statusLabels) m.resourceStatusCount.set({ resourcegroup, status }, byStatus.get(status) ?? 0);
}

/** Drops a group's count series: the group is gone, or no longer this process's to report. */
export function forgetGroupCounts(m: GroupCountMetrics, resourcegroup: string): void {
  for (const handle of [
    m.resourceCount,
    m.readyResourceCount,
    m.resourceNamespaceCount,
    m.clusterScopedResourceCount,
    m.crdCount,
    m.kccResourceCount,
  ])
    handle.remove({ resourcegroup });
  for (const status of statusLabels) m.resourceStatusCount.remove({ resourcegroup, status });
}

/**
 * A sync's own group: its counts, its size in bytes, and Config Sync's
 * pipeline_error_observed{component="readiness"}.
 */
export function recordResourceGroupMetrics(
  m: Metrics,
  identity: SyncIdentity,
  statuses: readonly ResourceStatusEntry[],
  bytes: number,
): void {
  const resourcegroup = `${identity.namespace}/${identity.name}`;
  recordGroupCounts(m, resourcegroup, statuses);
  m.resourceGroupBytes.set({ resourcegroup }, bytes);
  m.pipelineErrorObserved.set(
    { ...pipelineLabels(identity), component: "readiness" },
    readinessFailed(statuses) ? 1 : 0,
  );
}
