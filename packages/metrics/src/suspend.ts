/** A suspended sync's series (driftless's own: Config Sync cannot suspend a sync). */
import type { Registry } from "prom-client";
import { gauge, type GaugeHandle } from "./handles.ts";

/** How a declared or recorded object differs from the cluster while nothing is applied. */
export const DriftKind = {
  /** Declared, absent from the cluster. */
  Missing: "missing",
  /** Declared, present, and a write would change it. */
  Changed: "changed",
  /** Recorded in the inventory, no longer declared: a pass would delete it. */
  WouldPrune: "would_prune",
} as const;
export type DriftKind = (typeof DriftKind)[keyof typeof DriftKind];

export interface SuspendMetrics {
  /** driftless_sync_suspended: 1 while `driftless.dev/suspend` pauses the sync. */
  readonly syncSuspended: GaugeHandle;
  /** driftless_suspended_drift_objects{drift}: what a pass would change, as of the last suspended pass. */
  readonly suspendedDrift: GaugeHandle<{ drift: DriftKind }>;
}

export function suspendMetrics(registry: Registry, prefix: string): SuspendMetrics {
  return {
    syncSuspended: gauge(registry, {
      name: `${prefix}sync_suspended`,
      help: "1 while the sync is suspended (driftless.dev/suspend): nothing is applied, pruned or corrected",
      labelNames: [],
    }),
    suspendedDrift: gauge<{ drift: DriftKind }>(registry, {
      name: `${prefix}suspended_drift_objects`,
      help: "Objects a pass would create, update or prune, found by the last pass of a suspended sync (0 when not suspended)",
      labelNames: ["drift"],
    }),
  };
}
