/**
 * The ResourceGroup metrics: Config Sync's ResourceGroup controller's names (pkg/resourcegroup/
 * controllers/metrics), labelled `resourcegroup` = `<namespace>/<name>`, recorded by each reconciler
 * for its own group from the live status, and by the resource-group-controller for the groups it keeps
 * (`createResourceGroupControllerMetrics`); and driftless's own for what Config Sync does not export.
 */
import { Registry } from "prom-client";
import { gauge, histogram, type GaugeHandle, type HistogramHandle } from "./handles.ts";
import { collectProcessMetrics } from "./process-metrics.ts";

/** Config Sync's rg_reconcile_duration_seconds bounds. */
const RG_RECONCILE_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/** kstatus values an entry of status.resourceStatuses reports (`status` of driftless_resource_status_count). */
export const ResourceStatusLabel = {
  Current: "Current",
  InProgress: "InProgress",
  Failed: "Failed",
  Terminating: "Terminating",
  NotFound: "NotFound",
  Unknown: "Unknown",
} as const;
export type ResourceStatusLabel = (typeof ResourceStatusLabel)[keyof typeof ResourceStatusLabel];

type Group = { resourcegroup: string };

/** The counts of a group's inventory, registered with the reconciler's Config Sync metrics and the controller's. */
export interface InventoryCountMetrics {
  /** resource_count{resourcegroup}: objects in a ResourceGroup inventory (`<namespace>/<name>`). */
  readonly resourceCount: GaugeHandle<Group>;
  /** ready_resource_count{resourcegroup}: of those, how many are Current. */
  readonly readyResourceCount: GaugeHandle<Group>;
}

export function inventoryCountMetrics(registry: Registry, prefix: string): InventoryCountMetrics {
  return {
    resourceCount: gauge<Group>(registry, {
      name: `${prefix}resource_count`,
      help: "Objects in a ResourceGroup inventory",
      labelNames: ["resourcegroup"],
    }),
    readyResourceCount: gauge<Group>(registry, {
      name: `${prefix}ready_resource_count`,
      help: "Objects in a ResourceGroup inventory whose status is Current",
      labelNames: ["resourcegroup"],
    }),
  };
}

export interface ResourceGroupMetrics {
  /** resource_ns_count{resourcegroup}: namespaces the group's objects live in. */
  readonly resourceNamespaceCount: GaugeHandle<Group>;
  /** cluster_scoped_resource_count{resourcegroup}. */
  readonly clusterScopedResourceCount: GaugeHandle<Group>;
  /** crd_count{resourcegroup}: CustomResourceDefinitions in the group. */
  readonly crdCount: GaugeHandle<Group>;
  /** kcc_resource_count{resourcegroup}: Config Connector (cnrm.cloud.google.com) objects. */
  readonly kccResourceCount: GaugeHandle<Group>;
  /** rg_reconcile_duration_seconds{stallreason}: computing and writing the group's status. */
  readonly rgReconcileDuration: HistogramHandle<{ stallreason: string }>;
  /** driftless_resource_status_count{resourcegroup,status}: entries by kstatus. */
  readonly resourceStatusCount: GaugeHandle<Group & { status: ResourceStatusLabel }>;
  /** driftless_resource_group_bytes{resourcegroup}: spec.resources and status as stored, against etcd's limit. */
  readonly resourceGroupBytes: GaugeHandle<Group>;
}

export function resourceGroupMetrics(registry: Registry, prefix: string, ownPrefix: string): ResourceGroupMetrics {
  const group = ["resourcegroup"] as const;
  return {
    resourceNamespaceCount: gauge<Group>(registry, {
      name: `${prefix}resource_ns_count`,
      help: "Namespaces used by the objects of a ResourceGroup",
      labelNames: group,
    }),
    clusterScopedResourceCount: gauge<Group>(registry, {
      name: `${prefix}cluster_scoped_resource_count`,
      help: "Cluster-scoped objects in a ResourceGroup",
      labelNames: group,
    }),
    crdCount: gauge<Group>(registry, {
      name: `${prefix}crd_count`,
      help: "CustomResourceDefinitions in a ResourceGroup",
      labelNames: group,
    }),
    kccResourceCount: gauge<Group>(registry, {
      name: `${prefix}kcc_resource_count`,
      help: "Config Connector objects in a ResourceGroup",
      labelNames: group,
    }),
    rgReconcileDuration: histogram<{ stallreason: string }>(
      registry,
      {
        name: `${prefix}rg_reconcile_duration_seconds`,
        help: "Seconds taken to compute and write a ResourceGroup's status, by the reason of its Stalled condition",
        labelNames: ["stallreason"],
      },
      RG_RECONCILE_BUCKETS,
    ),
    resourceStatusCount: gauge<Group & { status: ResourceStatusLabel }>(registry, {
      name: `${ownPrefix}resource_status_count`,
      help: "Entries of a ResourceGroup's status.resourceStatuses by kstatus",
      labelNames: ["resourcegroup", "status"],
    }),
    resourceGroupBytes: gauge<Group>(registry, {
      name: `${ownPrefix}resource_group_bytes`,
      help: "Bytes of a ResourceGroup's spec.resources and status.resourceStatuses as JSON (etcd refuses a request over 1.5 MiB)",
      labelNames: group,
    }),
  };
}

/** What Config Sync's resource-group-controller exports, for the groups it keeps (not the reconcilers'). */
export interface ResourceGroupControllerMetrics extends InventoryCountMetrics, ResourceGroupMetrics {
  readonly registry: Registry;
  /** resource_group_total: the ResourceGroups the controller keeps the status of. */
  readonly resourceGroupTotal: GaugeHandle;
}

export function createResourceGroupControllerMetrics(
  options: {
    readonly prefix?: string;
    readonly ownPrefix?: string;
    /** Where to register: the manager's registry when it runs the controller itself. Default: a new one. */
    readonly registry?: Registry;
    /** Node's process metrics too. Default true for a new registry, false for one passed in. */
    readonly processMetrics?: boolean;
  } = {},
): ResourceGroupControllerMetrics {
  const registry = options.registry ?? new Registry();
  if (options.processMetrics ?? options.registry === undefined) collectProcessMetrics(registry);
  const prefix = options.prefix ?? "config_sync_";
  return {
    registry,
    resourceGroupTotal: gauge(registry, {
      name: `${prefix}resource_group_total`,
      help: "ResourceGroups whose status the resource-group-controller keeps",
      labelNames: [],
    }),
    ...inventoryCountMetrics(registry, prefix),
    ...resourceGroupMetrics(registry, prefix, options.ownPrefix ?? "driftless_"),
  };
}
