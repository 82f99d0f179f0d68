import { randomBytes } from "node:crypto";
import { redactCredentials } from "@driftless/api";
import type { SyncIdentity } from "@driftless/applier";
import type { KubeClient, KubeObject, ResourceMapping } from "@driftless/kube";
import { rsyncMapping } from "./rsync.ts";
import type { Logger } from "./log.ts";

const eventMapping: ResourceMapping = {
  group: "",
  version: "v1",
  kind: "Event",
  resource: "events",
  namespaced: true,
  verbs: ["create", "get", "list", "watch"],
};

export const SyncEventReason = {
  Started: "SyncStarted",
  Synced: "Synced",
  Failed: "SyncFailed",
  /** Foreground deletion left a Namespace or CRD in place, released, because objects that stay still use it. */
  Released: "ObjectsReleased",
} as const;
export type SyncEventReason = (typeof SyncEventReason)[keyof typeof SyncEventReason];

/**
 * Records a Kubernetes Event on the RSync (what `kubectl describe` and event exporters show). Only
 * called on transitions, never on an unchanged pass. An Event that cannot be written is logged,
 * never fatal: events are a courtesy, status is the record.
 */
export async function recordEvent(
  client: KubeClient,
  identity: SyncIdentity,
  sync: KubeObject | undefined,
  reason: SyncEventReason,
  message: string,
  log: Logger,
): Promise<void> {
  const mapping = rsyncMapping(identity.kind);
  const now = new Date().toISOString();
  const event: KubeObject = {
    apiVersion: "v1",
    kind: "Event",
    metadata: {
      name: `${identity.name}.${Date.now().toString(16)}${randomBytes(2).toString("hex")}`,
      namespace: identity.namespace,
    },
    involvedObject: {
      apiVersion: `${mapping.group}/${mapping.version}`,
      kind: mapping.kind,
      namespace: identity.namespace,
      name: identity.name,
      ...(sync?.metadata.uid === undefined ? {} : { uid: sync.metadata.uid }),
    },
    reason,
    message: redactCredentials(message).slice(0, 1024),
    type: reason === SyncEventReason.Failed || reason === SyncEventReason.Released ? "Warning" : "Normal",
    source: { component: "driftless-reconciler" },
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  };
  try {
    await client.create(eventMapping, event);
  } catch (error) {
    log.warn("could not record an event", { reason, error: String(error) });
  }
}
