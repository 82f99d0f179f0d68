/**
 * ResourceGroup (`kpt.dev/v1alpha1`): the inventory of one sync. It has the sync's name and
 * namespace; spec.resources lists every object the sync manages, which is what makes pruning
 * safe, and status.resourceStatuses reports how each one is doing.
 */
import type { ObjectMeta } from "./object-meta.ts";

/** kstatus of one object. */
export const ResourceStatusValue = {
  InProgress: "InProgress",
  Failed: "Failed",
  Current: "Current",
  Terminating: "Terminating",
  NotFound: "NotFound",
  Unknown: "Unknown",
} as const;
export type ResourceStatusValue = (typeof ResourceStatusValue)[keyof typeof ResourceStatusValue];

/** Whether the object is (to be) applied or deleted. */
export const ActuationStrategy = {
  Apply: "Apply",
  Delete: "Delete",
} as const;
export type ActuationStrategy = (typeof ActuationStrategy)[keyof typeof ActuationStrategy];

/** How the apply or delete went. */
export const Actuation = {
  Pending: "Pending",
  Succeeded: "Succeeded",
  Skipped: "Skipped",
  Failed: "Failed",
} as const;
export type Actuation = (typeof Actuation)[keyof typeof Actuation];

/** How waiting for the object to become Current (or NotFound) went. */
export const ReconcileValue = {
  Pending: "Pending",
  Succeeded: "Succeeded",
  Skipped: "Skipped",
  /** Not Current within override.reconcileTimeout. */
  Timeout: "Timeout",
  Failed: "Failed",
} as const;
export type ReconcileValue = (typeof ReconcileValue)[keyof typeof ReconcileValue];

export const ResourceGroupConditionType = {
  Reconciling: "Reconciling",
  Stalled: "Stalled",
  /** The object is also listed in another ResourceGroup; the message names it. */
  OwnershipOverlap: "OwnershipOverlap",
} as const;
export type ResourceGroupConditionType = (typeof ResourceGroupConditionType)[keyof typeof ResourceGroupConditionType];

export interface ResourceGroupCondition {
  readonly type: string;
  readonly status: "True" | "False" | "Unknown";
  readonly reason?: string;
  readonly message?: string;
  readonly lastTransitionTime?: string;
}

/** One inventory entry. Cluster-scoped objects have namespace "" (the field is required). */
export interface ObjMetadata {
  readonly group: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

export interface GroupMetadata {
  readonly namespace: string;
  readonly name: string;
}

export interface Link {
  readonly description: string;
  readonly url: string;
}

export interface Descriptor {
  readonly type?: string;
  readonly revision?: string;
  readonly description?: string;
  readonly links?: readonly Link[];
}

export interface ResourceGroupSpec {
  readonly resources?: readonly ObjMetadata[];
  readonly subgroups?: readonly GroupMetadata[];
  readonly descriptor?: Descriptor;
}

export interface ResourceStatus extends ObjMetadata {
  readonly status: ResourceStatusValue;
  /** Short hash of the declaring commit. */
  readonly sourceHash?: string;
  readonly conditions?: readonly ResourceGroupCondition[];
  readonly strategy?: ActuationStrategy;
  readonly actuation?: Actuation;
  readonly reconcile?: ReconcileValue;
}

export interface GroupStatus extends GroupMetadata {
  readonly status: ResourceStatusValue;
  readonly conditions?: readonly ResourceGroupCondition[];
}

export interface ResourceGroupStatus {
  /** Required by the CRD whenever status is written. */
  readonly observedGeneration: number;
  readonly resourceStatuses?: readonly ResourceStatus[];
  readonly subgroupStatuses?: readonly GroupStatus[];
  readonly conditions?: readonly ResourceGroupCondition[];
}

export interface ResourceGroup {
  readonly apiVersion: string;
  readonly kind: "ResourceGroup";
  readonly metadata: ObjectMeta;
  readonly spec?: ResourceGroupSpec;
  readonly status?: ResourceGroupStatus;
}

/** Length of `sourceHash` values (Config Sync writes the first 7 characters of the commit). */
export const SourceHashLength = 7;

/** The sourceHash recorded for an object applied from `commit`. */
export function sourceHash(commit: string): string {
  return commit.slice(0, SourceHashLength);
}
