import {
  InventoryIdLabel,
  ManagedAnnotation,
  ManagedByValue,
  ManagedLabel,
  ManagedValue,
  ResourceGroupStatusModeAnnotation,
  StatusMode,
  SyncLabel,
  inventoryId,
} from "@driftless/api";
import type { KubeObject } from "@driftless/kube";
import type { SyncIdentity } from "./desired.ts";

/** The labels and annotations a sync's ResourceGroup carries. */
export interface GroupMetadata {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

/**
 * What Config Sync puts on a sync's ResourceGroup: managed-by, the sync's kind, name and namespace
 * and the inventory id as labels; `configmanagement.gke.io/managed: enabled` and the status mode
 * (`configsync.gke.io/status`) as annotations. Tools select ResourceGroups by these labels.
 */
export function groupMetadata(sync: SyncIdentity, statusMode: StatusMode): GroupMetadata {
  return {
    labels: {
      [InventoryIdLabel]: inventoryId(sync.namespace, sync.name),
      [ManagedLabel.ManagedBy]: ManagedByValue,
      [SyncLabel.SyncKind]: sync.kind,
      [SyncLabel.SyncName]: sync.name,
      [SyncLabel.SyncNamespace]: sync.namespace,
      // driftless's earlier labels, kept so selectors written for them still match.
      "configmanagement.gke.io/system": "true",
      "configmanagement.gke.io/arch": "csmr",
    },
    annotations: {
      [ManagedAnnotation.Managed]: ManagedValue.Enabled,
      [ResourceGroupStatusModeAnnotation]: statusMode,
    },
  };
}

/** Whether `metadata` already carries every label and annotation of `wanted`. */
export function carriesGroupMetadata(metadata: KubeObject["metadata"], wanted: GroupMetadata): boolean {
  const has = (actual: Readonly<Record<string, string>> | undefined, expected: Readonly<Record<string, string>>) =>
    Object.entries(expected).every(([key, value]) => actual?.[key] === value);
  return has(metadata.labels, wanted.labels) && has(metadata.annotations, wanted.annotations);
}

/** `metadata` with `wanted` laid over its labels and annotations (others' keys kept). */
export function withGroupMetadata(metadata: KubeObject["metadata"], wanted: GroupMetadata): KubeObject["metadata"] {
  return {
    ...metadata,
    labels: { ...metadata.labels, ...wanted.labels },
    annotations: { ...metadata.annotations, ...wanted.annotations },
  };
}
