import { hash } from "node:crypto";
import type { StatusMode } from "@driftless/api";
import { isNotFound, type KubeClient, type KubeObject } from "@driftless/kube";
import { canonicalJson } from "@driftless/objectmatcher";
import type { SyncIdentity } from "./desired.ts";
import { fitStatuses, InventoryTooLargeError, ResourceGroupByteBudget } from "./inventory-budget.ts";
import { InventoryOverflow } from "./inventory-overflow.ts";
import { recordedIds, specWithResources } from "./recorded-ids.ts";
import { resourceGroupMapping } from "./resource-group-mapping.ts";
import { carriesGroupMetadata, groupMetadata, withGroupMetadata } from "./resource-group-metadata.ts";
import { mergeConditions, type GroupCondition, type ResourceStatusEntry } from "./resource-status.ts";
import { compareIds, idKey, type ObjectId } from "./object-id.ts";

export { resourceGroupMapping };

const statusBudgetStep = 16 * 1024;

/** Condition on the ResourceGroup when status.resourceStatuses had to be shortened (driftless's own). */
export const StatusesOmittedCondition = "ResourceStatusesOmitted";

/** An entry of spec.resources: exactly these four fields (ids from a parsed source already are). */
function inventoryEntry(id: ObjectId): ObjectId {
  const keys = Object.keys(id);
  if (keys.length === 4 && id.namespace !== undefined) return id;
  return { group: id.group, kind: id.kind, namespace: id.namespace ?? "", name: id.name };
}

/**
 * What an Inventory knows of the ResourceGroup as last read or written. Its two big lists are not
 * kept as the server's JSON: `resources` are the ids (shared with the declarations), and the stored
 * statuses are known by a digest, which is all that deciding "no write needed" takes.
 */
interface KnownGroup {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: KubeObject["metadata"];
  /** spec without resources (fields other tools may have set, kept on every write). */
  readonly spec: Readonly<Record<string, unknown>>;
  readonly resources: readonly ObjectId[];
  readonly resourcesDigest: string;
  /** Bytes of spec.resources as JSON, for the status budget. */
  readonly resourcesBytes: number;
  /** status without resourceStatuses (conditions, and whatever else others keep there). */
  readonly statusRest: Readonly<Record<string, unknown>>;
  /** Digest of the whole status as stored. */
  readonly statusDigest: string;
}

/**
 * The sync's ResourceGroup: the record of every object it applied, which is what pruning trusts.
 * Same name and namespace as the sync, like Config Sync's. One instance lives as long as the
 * reconciler: at 10,000 objects the ResourceGroup is megabytes of JSON, and a pass over an unchanged
 * cluster reads only its metadata to learn that nothing changed since this instance wrote it.
 */
export class Inventory {
  private readonly client: KubeClient;
  private readonly sync: SyncIdentity;
  private known: KnownGroup | undefined;
  /**
   * The ids of the last write that left spec.resources as `digest`. A pass over an unchanged source
   * hands write() the very same id objects (declarations live as long as their commit), so seeing
   * them again, while the group still holds that digest, settles it without de-duplicating,
   * sorting and digesting 20,000 entries twice a pass.
   */
  private lastWrite: { readonly ids: readonly ObjectId[]; readonly digest: string } | undefined;
  private readonly overflow: InventoryOverflow;
  /**
   * The sync's spec.override.statusMode, set before each pass's writes: `disabled` leaves
   * status empty (no per-object status), as Config Sync does, and is recorded in an annotation.
   */
  statusMode: StatusMode = "enabled";
  /** Bytes of the status as last written or found unchanged (for the size metric). */
  private statusBytes = 0;

  constructor(client: KubeClient, sync: SyncIdentity) {
    this.client = client;
    this.sync = sync;
    this.overflow = new InventoryOverflow(client, sync);
  }

  /**
   * Every id the inventory records: spec.resources as stored now, with those of an overflow group
   * a large rename left (inventory-overflow.ts). A full GET only when the group changed since we knew it.
   */
  async read(): Promise<ObjectId[]> {
    const main = await this.readMain();
    const overflow = await this.overflow.read();
    return overflow.length === 0 ? main : [...main, ...overflow];
  }

  private async readMain(): Promise<ObjectId[]> {
    const stored = await this.client.getMetadata(resourceGroupMapping, this.sync.namespace, this.sync.name);
    if (stored === undefined) {
      this.known = undefined;
      return [];
    }
    const known = this.known;
    if (known === undefined || known.metadata.resourceVersion !== stored.metadata.resourceVersion) {
      this.known = undefined;
      return [...((await this.current())?.resources ?? [])];
    }
    return [...known.resources];
  }

  private async current(): Promise<KnownGroup | undefined> {
    if (this.known !== undefined) return this.known;
    const group = await this.client.get(resourceGroupMapping, this.sync.namespace, this.sync.name);
    this.known = group === undefined ? undefined : knownFrom(group);
    return this.known;
  }

  /**
   * What a ResourceGroup as read (`group`) and the sync's overflow group record, read without this
   * class's caches: a restart's restore runs beside the first pass, whose Inventory must not learn a
   * state older than its own write.
   */
  static async storedIds(client: KubeClient, sync: SyncIdentity, group: KubeObject): Promise<ObjectId[]> {
    // The overflow's ids only add to what the caches keep: a failed read of it keeps the group's own.
    const overflow = await new InventoryOverflow(client, sync).read().catch((): ObjectId[] => []);
    return [...recordedIds(group), ...overflow].filter((id) => id.kind !== "" && id.name !== "");
  }

  /**
   * Records exactly `ids` (sorted, de-duplicated); creates the ResourceGroup when missing. When they
   * do not fit in one group, the group keeps what it holds and the ids it lacks go to the overflow
   * group, so nothing is forgotten; a later write that fits puts everything back in one group.
   */
  async write(ids: readonly ObjectId[]): Promise<void> {
    const last = this.lastWrite;
    if (
      last !== undefined &&
      this.known?.resourcesDigest === last.digest &&
      sameObjects(ids, last.ids) &&
      carriesGroupMetadata(this.known.metadata, this.metadata())
    ) {
      await this.overflow.clear();
      return;
    }
    const unique = new Map<string, ObjectId>();
    for (const id of ids) unique.set(idKey(id), inventoryEntry(id));
    const resources = [...unique.values()].sort(compareIds);
    if (JSON.stringify(resources).length > ResourceGroupByteBudget) return this.writeOverflow(resources);
    await this.writeMain(ids, resources);
    await this.overflow.clear();
  }

  /** Deletes the group and the overflow group: once the sync is going, nothing is managed to record. */
  async delete(): Promise<void> {
    await this.client.delete(resourceGroupMapping, this.sync.namespace, this.sync.name);
    this.known = undefined;
    this.lastWrite = undefined;
    await this.overflow.clear();
  }

  /** The part of `resources` the sync's group lacks goes to the overflow group; it alone must fit. */
  private async writeOverflow(resources: readonly ObjectId[]): Promise<void> {
    const known = await this.current();
    if (known === undefined) return void this.checkSize(resources); // nothing recorded yet: too large alone
    const recorded = new Set(known.resources.map(idKey));
    const missing = resources.filter((id) => !recorded.has(idKey(id)));
    this.checkSize(missing);
    await this.overflow.write(missing);
  }

  private async writeMain(ids: readonly ObjectId[], resources: ObjectId[]): Promise<void> {
    const digest = resourcesDigest(resources);
    const wanted = this.metadata();
    this.lastWrite = undefined;
    for (let attempt = 0; attempt < 5; attempt++) {
      const known = await this.current();
      if (known !== undefined && known.resourcesDigest === digest && carriesGroupMetadata(known.metadata, wanted)) {
        this.lastWrite = { ids: [...ids], digest };
        return; // nothing changed: no write
      }
      const resourcesBytes = this.checkSize(resources);
      try {
        if (known === undefined) {
          const group = this.newGroup(resources);
          const created = await this.client.create(resourceGroupMapping, group, { response: "metadata" });
          this.known = { ...knownFrom(group), metadata: created.metadata };
          this.lastWrite = { ids: [...ids], digest };
          return;
        }
        // Only metadata is read back: parsing megabytes to learn a resourceVersion was most of the
        // write. status belongs to the status subresource: the main resource ignores it, so it is not sent.
        const { apiVersion, kind, spec } = known;
        const metadata = withGroupMetadata(known.metadata, wanted);
        const stored = await this.client.replace(
          resourceGroupMapping,
          { apiVersion, kind, metadata, spec: specWithResources(spec, resources) },
          { response: "metadata" },
        );
        this.known = { ...known, metadata: stored.metadata, resources, resourcesDigest: digest, resourcesBytes };
        this.lastWrite = { ids: [...ids], digest };
        return;
      } catch (error) {
        this.known = undefined;
        const retry = known === undefined || (error as { status?: number }).status === 409;
        if (attempt < 4 && retry) continue;
        throw error;
      }
    }
  }

  /**
   * Writes status.resourceStatuses and the group's `conditions` (merged by type with those stored)
   * when they changed; with statusMode `disabled`, an empty status.
   */
  async writeStatus(
    statuses: readonly ResourceStatusEntry[],
    groupConditions: readonly GroupCondition[] = [],
  ): Promise<void> {
    const known = await this.current();
    if (known === undefined) return;
    const { apiVersion, kind, metadata, spec } = known;
    // Disabled: an empty status, as Config Sync's controller writes it (observedGeneration 0: the CRD requires it).
    if (this.statusMode === "disabled") return this.replaceStatus(known, { observedGeneration: 0 });
    // Rounded down to 16 KiB: the rest of the object (managedFields grows with our own status write)
    // changes by a few hundred bytes between passes, which must not change how many statuses fit,
    // or every other pass would rewrite megabytes of status to say the same thing.
    const rest = JSON.stringify({ apiVersion, kind, metadata, spec: { ...spec, resources: [] } }).length;
    const exact = ResourceGroupByteBudget - rest - known.resourcesBytes - 2_000;
    const spare = Math.floor(exact / statusBudgetStep) * statusBudgetStep;
    const { kept, omitted } = fitStatuses(statuses, spare);
    const previous = known.statusRest as { conditions?: GroupCondition[] };
    const conditions = mergeConditions(previous.conditions ?? [], groupConditions, new Date()).filter(
      (c) => c.type !== StatusesOmittedCondition,
    );
    if (omitted > 0) {
      conditions.push({
        type: StatusesOmittedCondition,
        status: "True",
        reason: "SizeLimit",
        message: `${omitted} of ${statuses.length} resource statuses are omitted to keep the ResourceGroup under etcd's request limit; objects that need attention are listed first`,
      });
    }
    const status: Record<string, unknown> = {
      ...previous,
      observedGeneration: metadata.generation ?? 0,
      // Config Sync's resourceStatuses is omitempty: an empty inventory has none, not [].
      ...(kept.length > 0 ? { resourceStatuses: kept } : {}),
      ...(conditions.length > 0 ? { conditions } : {}),
    };
    if (conditions.length === 0) delete status["conditions"];
    return this.replaceStatus(known, status);
  }

  /** Bytes of spec.resources and status as JSON, as last read or written: the group's size in etcd, roughly. */
  get sizeBytes(): number {
    return (this.known?.resourcesBytes ?? 0) + this.statusBytes;
  }

  private async replaceStatus(known: KnownGroup, status: Record<string, unknown>): Promise<void> {
    const { apiVersion, kind, metadata } = known;
    const text = canonicalJson(status);
    this.statusBytes = text.length;
    const digest = hash("sha256", text, "base64");
    if (digest === known.statusDigest) return;
    try {
      // The status subresource takes status only (the server keeps its own spec): the megabyte spec
      // is not sent again, and only the new metadata is read back.
      const stored = await this.client.replaceStatus(
        resourceGroupMapping,
        { apiVersion, kind, metadata, status },
        { response: "metadata" },
      );
      this.known = { ...known, metadata: stored.metadata, statusRest: statusRestOf(status), statusDigest: digest };
    } catch (error) {
      this.known = undefined;
      if (!isNotFound(error)) throw error;
    }
  }

  /** Measured only before a write (what is stored already fits); answers the size. */
  private checkSize(resources: readonly ObjectId[]): number {
    const bytes = JSON.stringify(resources).length;
    if (bytes > ResourceGroupByteBudget) throw new InventoryTooLargeError(this.sync, resources.length, bytes);
    return bytes;
  }

  private metadata(): ReturnType<typeof groupMetadata> {
    return groupMetadata(this.sync, this.statusMode);
  }

  private newGroup(resources: readonly ObjectId[]): KubeObject {
    const { labels, annotations } = this.metadata();
    return {
      apiVersion: "kpt.dev/v1alpha1",
      kind: "ResourceGroup",
      metadata: {
        name: this.sync.name,
        namespace: this.sync.namespace,
        labels: { ...labels },
        annotations: { ...annotations },
      },
      spec: specWithResources({}, resources),
    };
  }
}

/** The same objects in the same order (identity, not equality: see Inventory.lastWrite). */
function sameObjects(a: readonly ObjectId[], b: readonly ObjectId[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function knownFrom(group: KubeObject): KnownGroup {
  const { resources: raw, ...spec } = (group["spec"] ?? {}) as { resources?: unknown };
  const resources = recordedIds({ ...group, spec: { resources: raw } });
  const status = (group["status"] ?? {}) as Record<string, unknown>;
  return {
    apiVersion: group.apiVersion,
    kind: group.kind,
    metadata: group.metadata,
    spec,
    resources,
    resourcesDigest: resourcesDigest(resources),
    resourcesBytes: JSON.stringify(resources).length,
    statusRest: statusRestOf(status),
    statusDigest: statusDigest(status),
  };
}

function statusRestOf(status: Record<string, unknown>): Record<string, unknown> {
  const { resourceStatuses: _big, ...rest } = status;
  return rest;
}

/** The ids in order, one per line: equal lists, equal digests, whatever the key order of each entry. */
function resourcesDigest(resources: readonly ObjectId[]): string {
  const text = resources.map((r) => `${r.group}\u0000${r.kind}\u0000${r.namespace ?? ""}\u0000${r.name}`).join("\n");
  return hash("sha256", text, "base64");
}

/** Of the status's content, not its key order (the server sends keys sorted, we build them in our order). */
function statusDigest(status: Record<string, unknown>): string {
  return hash("sha256", canonicalJson(status), "base64");
}
