import {
  InventoryIdLabel,
  inventoryGroupNames,
  inventoryId,
  DriftlessError,
  ErrorClass,
  KnvCode,
} from "@driftless/api";
import { isNotFound, type KubeClient, type KubeObject } from "@driftless/kube";
import type { SyncIdentity } from "./desired.ts";
import { resourceGroupMapping } from "./resource-group-mapping.ts";
import type { ObjectId } from "./object-id.ts";
import { recordedIds, specWithResources } from "./recorded-ids.ts";

/**
 * Marks the overflow group, and says whose it is: a ResourceGroup of that name without it is someone else's
 * (another party's, or the group of a sync itself named `<sync>.pending`), which the sync neither reads, deletes
 * nor overwrites.
 */
export const OverflowOfLabel = "driftless.dev/inventory-overflow-of";

/**
 * A second ResourceGroup, `<sync>.pending`, that holds the ids of a commit's new objects while the
 * previous ones still fill the sync's own group: a large rename (old ∪ new over one group's byte
 * budget) is then applied without forgetting either side. It exists only from the write before
 * apply until the pass records the new inventory in the sync's group, and a pass that finds one
 * (a crash in between) reads it as part of the inventory.
 */
export class InventoryOverflow {
  readonly #client: KubeClient;
  readonly #sync: SyncIdentity;
  readonly #name: string;
  /** Only this sync's reconciler writes the group, so once it is known absent it stays absent until we write it. */
  #knownAbsent = false;

  constructor(client: KubeClient, sync: SyncIdentity) {
    this.#client = client;
    this.#sync = sync;
    this.#name = inventoryGroupNames(sync.name)[1];
  }

  async read(): Promise<ObjectId[]> {
    if (this.#knownAbsent) return [];
    const group = await this.#get();
    if (group === undefined || !this.#isOurs(group)) {
      this.#knownAbsent = true;
      return [];
    }
    return recordedIds(group);
  }

  async write(resources: readonly ObjectId[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const current = await this.#get();
      // Only a pass that needs the overflow group fails on a foreign one; every other pass ignores it.
      if (current !== undefined && !this.#isOurs(current)) throw new OverflowNameTakenError(this.#sync, this.#name);
      const body: KubeObject = {
        apiVersion: "kpt.dev/v1alpha1",
        kind: "ResourceGroup",
        metadata: {
          name: this.#name,
          namespace: this.#sync.namespace,
          labels: {
            [OverflowOfLabel]: this.#sync.name,
            [InventoryIdLabel]: inventoryId(this.#sync.namespace, this.#sync.name),
          },
          ...(current === undefined ? {} : { resourceVersion: current.metadata.resourceVersion }),
        },
        spec: specWithResources({}, resources),
      };
      try {
        if (current === undefined) await this.#client.create(resourceGroupMapping, body, { response: "metadata" });
        else await this.#client.replace(resourceGroupMapping, body, { response: "metadata" });
        this.#knownAbsent = false;
        return;
      } catch (error) {
        const status = (error as { status?: number }).status;
        if (attempt >= 4 || (status !== 409 && !isNotFound(error))) throw error;
      }
    }
  }

  /** Removes the group once the sync's own group holds everything again. */
  async clear(): Promise<void> {
    if (this.#knownAbsent) return;
    const group = await this.#get();
    if (group !== undefined && this.#isOurs(group))
      await this.#client.delete(resourceGroupMapping, this.#sync.namespace, this.#name, {
        preconditions: { uid: group.metadata.uid },
      });
    this.#knownAbsent = true;
  }

  #get(): Promise<KubeObject | undefined> {
    return this.#client.get(resourceGroupMapping, this.#sync.namespace, this.#name);
  }

  #isOurs(group: KubeObject): boolean {
    return group.metadata.labels?.[OverflowOfLabel] === this.#sync.name;
  }
}

/** Another sync's ResourceGroup already has the overflow group's name. */
export class OverflowNameTakenError extends DriftlessError {
  constructor(sync: SyncIdentity, name: string) {
    super({
      // A failed inventory write, as Config Sync reports one (KNV2009).
      code: KnvCode.Apply,
      errorClass: ErrorClass.Terminal,
      message: `the inventory of ${sync.kind} ${sync.namespace}/${sync.name} needs a second ResourceGroup, ${name}, for this commit, but a ResourceGroup of that name exists without the label ${OverflowOfLabel}=${sync.name} (another sync's inventory, or someone else's object), which the sync leaves alone; apply the change in two commits, or rename or remove that ResourceGroup`,
    });
  }
}
