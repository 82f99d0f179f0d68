import type { ObjectId } from "./object-id.ts";

/** One entry of ResourceGroup status.resourceStatuses. */
export interface ResourceStatusEntry extends ObjectId {
  readonly status: string;
  readonly sourceHash?: string;
  readonly strategy: "Apply" | "Delete";
  readonly actuation: "Pending" | "Succeeded" | "Skipped" | "Failed";
  readonly reconcile: "Pending" | "Succeeded" | "Skipped" | "Failed";
  readonly conditions?: readonly {
    type: string;
    status: string;
    reason?: string;
    message?: string;
    lastTransitionTime?: string;
  }[];
}
