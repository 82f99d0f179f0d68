import type { DriftlessError } from "@driftless/api";
import type { ResourceMapping } from "@driftless/kube";
import type { DesiredObject } from "./desired.ts";
import type { HealthStatus } from "./kstatus.ts";

export const Operation = {
  Created: "created",
  Updated: "updated",
  Unchanged: "unchanged",
  /** Not applied: management disabled, or a dependency failed. */
  Skipped: "skipped",
  Failed: "failed",
} as const;
export type Operation = (typeof Operation)[keyof typeof Operation];

export interface ApplyOutcome {
  readonly desired: DesiredObject;
  readonly operation: Operation;
  /**
   * kstatus of the live object after the step. Only the verdict is kept, not the object: at 10,000
   * objects, holding every server response until the next pass would cost tens of MiB.
   */
  readonly health?: HealthStatus;
  readonly mapping?: ResourceMapping;
  readonly error?: DriftlessError;
  /** A failed apply: the object was in the cluster, this sync's (its owning-inventory), when it was last read. */
  readonly liveOwned?: boolean;
  /** A failed apply: the write it sent and the server refused (none when it failed before writing). */
  readonly attempted?: "create" | "update";
}
