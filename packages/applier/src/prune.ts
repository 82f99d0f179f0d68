import {
  DriftlessError,
  ErrorClass,
  KnvCode,
  LifecycleDeletionValue,
  ManagedAnnotation,
  UserAnnotation,
  inventoryId,
} from "@driftless/api";
import { isNotFound, type KubeClient, type KubeObject, type ResourceMapping, type RestMapper } from "@driftless/kube";
import { mapLimit } from "./concurrency.ts";
import { stripManagement } from "./decorate.ts";
import type { SyncIdentity } from "./desired.ts";
import { idKey, type ObjectId } from "./object-id.ts";

export const PruneOperation = {
  Deleted: "deleted",
  /** Left on the cluster without our metadata (`client.lifecycle.config.k8s.io/deletion: detach`, or a namespace that still holds other objects). */
  Detached: "detached",
  /** Already gone. */
  Gone: "gone",
  /** No longer carries our owning-inventory annotation: someone else's now, never deleted by us. */
  Abandoned: "abandoned",
  Failed: "failed",
} as const;
export type PruneOperation = (typeof PruneOperation)[keyof typeof PruneOperation];

export interface PruneOutcome {
  readonly id: ObjectId;
  readonly operation: PruneOperation;
  readonly error?: DriftlessError;
}

export interface PruneOptions {
  readonly client: KubeClient;
  readonly mapper: RestMapper;
  readonly sync: SyncIdentity;
  readonly lastAppliedAnnotation: string;
  readonly concurrency?: number;
  /** Says whether a namespace holds objects other than those being pruned now. */
  readonly namespaceInUse: (namespace: string, pruning: ReadonlySet<string>) => Promise<boolean>;
}

export class PruneError extends DriftlessError {
  constructor(id: ObjectId, cause: unknown) {
    super({
      code: KnvCode.Apply,
      errorClass: ErrorClass.Retry,
      message: `failed to prune ${idKey(id)}: ${cause instanceof Error ? cause.message : String(cause)}`,
      resources: [id],
      cause,
    });
  }
}

/** Deletion order is the reverse of apply order: contents, then Namespaces, then CRDs. */
function pruneRank(id: ObjectId): number {
  if (id.kind === "CustomResourceDefinition" && id.group === "apiextensions.k8s.io") return 2;
  if (id.kind === "Namespace" && id.group === "") return 1;
  return 0;
}

/**
 * Deletes objects that left the source, but only those whose live copy still carries this sync's
 * owning-inventory annotation: an object adopted by someone else, or re-created by hand, is never ours to delete.
 */
export async function prune(candidates: readonly ObjectId[], options: PruneOptions): Promise<PruneOutcome[]> {
  const pruning = new Set(candidates.map(idKey));
  const ranks = [0, 1, 2].map((rank) => candidates.filter((id) => pruneRank(id) === rank));
  const outcomes: PruneOutcome[] = [];
  for (const batch of ranks) {
    outcomes.push(...(await mapLimit(batch, options.concurrency ?? 16, (id) => pruneOne(id, pruning, options))));
  }
  return outcomes;
}

async function pruneOne(id: ObjectId, pruning: ReadonlySet<string>, options: PruneOptions): Promise<PruneOutcome> {
  try {
    const mapping = await options.mapper.mappingForGroupKind(id.group, id.kind);
    if (mapping === undefined) return { id, operation: PruneOperation.Gone }; // its type is gone, and so is it
    const namespace = mapping.namespaced ? id.namespace : undefined;
    // Read fresh, not from a cache: a delete decision must rest on the live annotation.
    const live = await options.client.get(mapping, namespace, id.name);
    if (live === undefined) return { id, operation: PruneOperation.Gone };
    const annotations = live.metadata.annotations ?? {};
    if (annotations[ManagedAnnotation.OwningInventory] !== inventoryId(options.sync.namespace, options.sync.name)) {
      return { id, operation: PruneOperation.Abandoned };
    }
    const detach = annotations[UserAnnotation.LifecycleDeletion] === LifecycleDeletionValue.Detach;
    if (detach || (id.kind === "Namespace" && id.group === "" && (await options.namespaceInUse(id.name, pruning)))) {
      await unmanage(options.client, mapping, live, options.lastAppliedAnnotation);
      return { id, operation: PruneOperation.Detached };
    }
    await options.client.delete(mapping, namespace, id.name, {
      propagationPolicy: "Background",
      preconditions: { uid: live.metadata.uid ?? "" },
    });
    return { id, operation: PruneOperation.Deleted };
  } catch (error) {
    if (isNotFound(error)) return { id, operation: PruneOperation.Gone };
    return { id, operation: PruneOperation.Failed, error: new PruneError(id, error) };
  }
}

/** Removes driftless metadata from a live object, leaving the object itself in place. */
export async function unmanage(
  client: KubeClient,
  mapping: ResourceMapping,
  live: KubeObject,
  lastAppliedAnnotation: string,
): Promise<void> {
  const stripped = stripManagement(live, lastAppliedAnnotation);
  if (stripped === undefined) return;
  await client.replace(mapping, stripped as KubeObject);
}
