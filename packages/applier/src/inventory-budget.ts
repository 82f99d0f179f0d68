import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import type { ResourceStatusEntry } from "./resource-status.ts";
import { compareIds } from "./object-id.ts";

/**
 * etcd refuses a request over 1.5 MiB by default (--max-request-bytes), and a ResourceGroup is one
 * etcd value: spec.resources and status.resourceStatuses together. Budget well inside that, leaving
 * room for metadata and the API server's encoding.
 */
export const ResourceGroupByteBudget = 1_200_000;

/**
 * The inventory alone does not fit in one object: the source must be split. KNV2009 in Config Sync's words
 * (its applier's largeResourceGroupError, documented as a KNV2009 cause), naming the ResourceGroup.
 */
export class InventoryTooLargeError extends DriftlessError {
  constructor(group: { readonly namespace: string; readonly name: string }, objects: number, bytes: number) {
    super({
      code: KnvCode.Apply,
      errorClass: ErrorClass.Terminal,
      message:
        "source repository contains too many resource objects to inventory with a single ResourceGroup: " +
        `inventory apply failed: ResourceGroup.kpt.dev, ${group.namespace}/${group.name}: ` +
        `the inventory of ${objects} objects needs ${bytes} bytes, over the ${ResourceGroupByteBudget}-byte budget of one ResourceGroup (etcd's request limit). ` +
        "To mitigate, spread the source objects across multiple repositories (several RootSyncs or RepoSyncs). " +
        `For how, see ${breakingUpRepo}`,
    });
  }
}

/** Config Sync's guide to splitting a source, which its error links to. */
const breakingUpRepo = "https://cloud.google.com/anthos-config-management/docs/how-to/breaking-up-repo";

function needsAttention(entry: ResourceStatusEntry): boolean {
  return entry.status !== "Current" || entry.actuation !== "Succeeded" || entry.reconcile !== "Succeeded";
}

/**
 * The statuses that fit in `spareBytes`: those that need attention first (a user looking at a large
 * inventory wants the failures), then the rest in id order. Returned in id order with the count left out.
 */
export function fitStatuses(
  statuses: readonly ResourceStatusEntry[],
  spareBytes: number,
): { kept: ResourceStatusEntry[]; omitted: number } {
  const ordered = [...statuses].sort(
    (a, b) => Number(needsAttention(b)) - Number(needsAttention(a)) || compareIds(a, b),
  );
  const kept: ResourceStatusEntry[] = [];
  let used = 0;
  for (const entry of ordered) {
    const size = JSON.stringify(entry).length + 1;
    if (used + size > spareBytes) break;
    used += size;
    kept.push(entry);
  }
  return { kept: kept.sort(compareIds), omitted: statuses.length - kept.length };
}
