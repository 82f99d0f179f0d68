import { isDeepStrictEqual } from "node:util";
import { InventoryIdLabel, inventoryId } from "@driftless/api";
import { isNotFound, type KubeClient, type KubeObject, type ResourceMapping } from "@driftless/kube";
import type { SyncIdentity } from "./desired.ts";
import { fitStatuses, InventoryTooLargeError, ResourceGroupByteBudget } from "./inventory-budget.ts";
import type { ResourceStatusEntry } from "./resource-status.ts";
import { compareIds, idKey, type ObjectId } from "./object-id.ts";

export const resourceGroupMapping: ResourceMapping = {
  group: "kpt.dev",
  version: "v1alpha1",
  kind: "ResourceGroup",
  resource: "resourcegroups",
  namespaced: true,
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
};

const statusBudgetStep = 16 * 1024;

/** Condition on the ResourceGroup when status.resourceStatuses had to be shortened (driftless's own). */
export const StatusesOmittedCondition = "ResourceStatusesOmitted";

/**
 * The sync's ResourceGroup: the record of every object it applied, which is what pruning trusts.
 * Same name and namespace as the sync, like Config Sync's.
 */
/** An entry of spec.resources: exactly these four fields (ids from a parsed source already are). */
function inventoryEntry(id: ObjectId): ObjectId {
  const keys = Object.keys(id);
  if (keys.length === 4 && id.namespace !== undefined) return id;
  return { group: id.group, kind: id.kind, namespace: id.namespace ?? "", name: id.name };
}

export class Inventory {
  private readonly client: KubeClient;
  private readonly sync: SyncIdentity;
  /**
   * The ResourceGroup as last read or written by this instance (one per pass). At 10,000 objects it
   * is megabytes of JSON: a pass reads it once and reuses each write's response, instead of a GET
   * before every step. A conflict (someone else wrote) drops it and reads again.
   */
  private latest: KubeObject | undefined;

  constructor(client: KubeClient, sync: SyncIdentity) {
    this.client = client;
    this.sync = sync;
  }

  private async current(): Promise<KubeObject | undefined> {
    this.latest ??= await this.client.get(resourceGroupMapping, this.sync.namespace, this.sync.name);
    return this.latest;
  }

  async read(): Promise<ObjectId[]> {
    this.latest = undefined;
    const group = await this.current();
    const resources = ((group?.["spec"] as { resources?: unknown[] } | undefined)?.resources ?? []) as ObjectId[];
    return resources.map((r) => ({ group: r.group ?? "", kind: r.kind, namespace: r.namespace ?? "", name: r.name }));
  }

  /** Writes spec.resources (sorted, de-duplicated); creates the ResourceGroup when missing. */
  async write(ids: readonly ObjectId[]): Promise<void> {
    const unique = new Map<string, ObjectId>();
    for (const id of ids) unique.set(idKey(id), inventoryEntry(id));
    const resources = [...unique.values()].sort(compareIds);
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await this.current();
      if (current === undefined) {
        this.checkSize(resources);
        try {
          const group = this.newGroup(resources);
          const created = await this.client.create(resourceGroupMapping, group, { response: "metadata" });
          this.latest = { ...group, metadata: created.metadata };
          return;
        } catch (error) {
          this.latest = undefined;
          if (attempt < 4) continue;
          throw error;
        }
      }
      const existing = (current["spec"] as { resources?: unknown } | undefined)?.resources ?? [];
      // The API server returns keys in its own order: compare structurally, not as text.
      if (isDeepStrictEqual(existing, resources)) return; // nothing changed: no write
      this.checkSize(resources);
      try {
        // status is the status subresource's: the main resource ignores it, so it is not sent.
        const { status, ...withoutStatus } = current;
        const group = { ...withoutStatus, spec: { ...(current["spec"] as object), resources } };
        const stored = await this.client.replace(resourceGroupMapping, group, { response: "metadata" });
        // What the server stored is what we sent (with its new metadata): at 10,000 objects the
        // response is megabytes, and parsing it to learn a resourceVersion was most of the write.
        this.latest = { ...group, metadata: stored.metadata, ...(status === undefined ? {} : { status }) };
        return;
      } catch (error) {
        this.latest = undefined;
        if (attempt < 4 && (error as { status?: number }).status === 409) continue;
        throw error;
      }
    }
  }

  /** Writes status.resourceStatuses when they changed. */
  async writeStatus(statuses: readonly ResourceStatusEntry[]): Promise<void> {
    const current = await this.current();
    if (current === undefined) return;
    const { status: _previous, ...withoutStatus } = current;
    // Rounded down to 16 KiB: the rest of the object (managedFields grows with our own status write)
    // changes by a few hundred bytes between passes, which must not change how many statuses fit,
    // or every other pass would rewrite megabytes of status to say the same thing.
    const exact = ResourceGroupByteBudget - JSON.stringify(withoutStatus).length - 2_000;
    const spare = Math.floor(exact / statusBudgetStep) * statusBudgetStep;
    const { kept, omitted } = fitStatuses(statuses, spare);
    const previous = (current["status"] ?? {}) as { conditions?: { type: string }[] };
    const conditions = (previous.conditions ?? []).filter((c) => c.type !== StatusesOmittedCondition);
    if (omitted > 0) {
      conditions.push({
        type: StatusesOmittedCondition,
        status: "True",
        reason: "SizeLimit",
        message: `${omitted} of ${statuses.length} resource statuses are omitted to keep the ResourceGroup under etcd's request limit; objects that need attention are listed first`,
      } as { type: string });
    }
    const status = {
      ...previous,
      observedGeneration: current.metadata.generation ?? 0,
      resourceStatuses: kept,
      ...(conditions.length > 0 ? { conditions } : {}),
    };
    if (conditions.length === 0) delete (status as { conditions?: unknown }).conditions;
    if (isDeepStrictEqual(current["status"], status)) return;
    try {
      // The status subresource takes status only (the server keeps its own spec), so the megabyte
      // spec is not sent again, and only the new metadata is read from the answer.
      const { apiVersion, kind, metadata } = current;
      const stored = await this.client.replaceStatus(
        resourceGroupMapping,
        { apiVersion, kind, metadata, status },
        { response: "metadata" },
      );
      this.latest = { ...current, metadata: stored.metadata, status };
    } catch (error) {
      this.latest = undefined;
      if (!isNotFound(error)) throw error;
    }
  }

  /** Measured only before a write: what is stored already fits. */
  private checkSize(resources: readonly ObjectId[]): void {
    const bytes = JSON.stringify(resources).length;
    if (bytes > ResourceGroupByteBudget) throw new InventoryTooLargeError(resources.length, bytes);
  }

  private newGroup(resources: readonly ObjectId[]): KubeObject {
    return {
      apiVersion: "kpt.dev/v1alpha1",
      kind: "ResourceGroup",
      metadata: {
        name: this.sync.name,
        namespace: this.sync.namespace,
        labels: {
          [InventoryIdLabel]: inventoryId(this.sync.namespace, this.sync.name),
          "configmanagement.gke.io/system": "true",
          "configmanagement.gke.io/arch": "csmr",
        },
      },
      spec: { resources },
    };
  }
}
