import type { JsonObject } from "./desired.ts";

/** kstatus-style health of a live object, as the ResourceGroup reports it. */
export const HealthStatus = {
  Current: "Current",
  InProgress: "InProgress",
  Failed: "Failed",
  Terminating: "Terminating",
  NotFound: "NotFound",
  Unknown: "Unknown",
} as const;
export type HealthStatus = (typeof HealthStatus)[keyof typeof HealthStatus];

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
}

function num(value: unknown): number | undefined {
  return typeof value === "number" ? value : undefined;
}

/**
 * A small kstatus: generic rules (deletion, observedGeneration, Ready/Stalled/Reconciling
 * conditions) plus the built-in kinds whose status fields say more than conditions do.
 */
export function computeHealth(live: JsonObject | undefined): HealthStatus {
  if (live === undefined) return HealthStatus.NotFound;
  const meta = (live["metadata"] ?? {}) as { deletionTimestamp?: string; generation?: number };
  if (meta.deletionTimestamp !== undefined) return HealthStatus.Terminating;
  const status = (live["status"] ?? {}) as Record<string, unknown>;
  const observed = num(status["observedGeneration"]);
  if (observed !== undefined && meta.generation !== undefined && observed < meta.generation)
    return HealthStatus.InProgress;
  const conditions = (Array.isArray(status["conditions"]) ? status["conditions"] : []) as Condition[];
  const condition = (type: string): Condition | undefined => conditions.find((c) => c.type === type);
  if (condition("Stalled")?.status === "True") return HealthStatus.Failed;
  if (condition("Reconciling")?.status === "True") return HealthStatus.InProgress;

  switch (live["kind"]) {
    case "CustomResourceDefinition":
      return condition("Established")?.status === "True" ? HealthStatus.Current : HealthStatus.InProgress;
    case "Namespace":
      return status["phase"] === "Terminating" ? HealthStatus.Terminating : HealthStatus.Current;
    case "Deployment":
    case "StatefulSet":
    case "ReplicaSet": {
      if (observed === undefined) return HealthStatus.InProgress;
      const spec = (live["spec"] ?? {}) as Record<string, unknown>;
      const desired = num(spec["replicas"]) ?? 1;
      const ready = num(status["readyReplicas"]) ?? 0;
      const updated = num(status["updatedReplicas"]) ?? 0;
      return ready >= desired && updated >= desired ? HealthStatus.Current : HealthStatus.InProgress;
    }
    case "Pod":
      if (status["phase"] === "Failed") return HealthStatus.Failed;
      return status["phase"] === "Running" || status["phase"] === "Succeeded"
        ? HealthStatus.Current
        : HealthStatus.InProgress;
    case "PersistentVolumeClaim":
      return status["phase"] === "Bound" ? HealthStatus.Current : HealthStatus.InProgress;
    default: {
      const ready = condition("Ready");
      if (ready !== undefined) return ready.status === "True" ? HealthStatus.Current : HealthStatus.InProgress;
      return HealthStatus.Current;
    }
  }
}
