import { setTimeout as delay } from "node:timers/promises";
import {
  DeletionPropagationPolicy,
  DriftlessError,
  ErrorClass,
  Finalizer,
  KnvCode,
  SyncConditionType,
  deletionPropagationPolicyOf,
  isSuspended,
  removeCondition,
  setCondition,
  MaxStatusErrors,
  statusErrors,
  type SyncCondition,
} from "@driftless/api";
import {
  describeId,
  idKey,
  Inventory,
  NamespaceInUsePolicy,
  ownedBy,
  prune,
  PruneError,
  PruneOperation,
  unmanage,
  type ObjectId,
  type PruneOptions,
  type PruneOutcome,
  type SyncIdentity,
} from "@driftless/applier";
import {
  failureText,
  isConflict,
  isForbidden,
  isNotFound,
  type KubeClient,
  type KubeObject,
  type RestMapper,
} from "@driftless/kube";
import { recordEvent, SyncEventReason } from "./events.ts";
import type { Logger } from "./log.ts";
import { rsyncMapping } from "./rsync.ts";
import { writeStatus } from "./status.ts";

export interface FinalizerContext {
  readonly client: KubeClient;
  readonly mapper: RestMapper;
  readonly identity: SyncIdentity;
  readonly pruneOptions: () => PruneOptions;
  readonly lastAppliedAnnotation: string;
  /** How long one attempt waits for Foreground deletions to finish before retrying later. */
  readonly waitMs?: number;
  readonly log: Logger;
}

export class FinalizerError extends DriftlessError {
  /** One error per object the deletion could not finish: the ReconcilerFinalizerFailure condition lists them. */
  readonly objectErrors: readonly DriftlessError[];

  constructor(
    message: string,
    resources: readonly ObjectId[] = [],
    cause?: unknown,
    objectErrors: readonly DriftlessError[] = [],
  ) {
    super({ code: KnvCode.Apply, errorClass: ErrorClass.Retry, message, resources, cause });
    this.objectErrors = objectErrors;
  }
}

/** A deleted object still there when the wait ends, worded as Config Sync's destroyer reports it. */
class DeletionTimeoutError extends DriftlessError {
  constructor(id: ObjectId) {
    super({
      code: KnvCode.Apply,
      errorClass: ErrorClass.Retry,
      message: `failed to wait for ${describeId(id)}: reconcile timeout`,
    });
  }
}

/** An object Orphan could not release, in Config Sync's words (KNV2002, or KNV2013 when refused). */
class UnmanageError extends DriftlessError {
  readonly id: ObjectId;

  constructor(id: ObjectId, what: string, cause: unknown) {
    super({
      code: isForbidden(cause) ? KnvCode.InsufficientPermission : KnvCode.ApiServer,
      errorClass: ErrorClass.Retry,
      message: `${what}: ${failureText(cause)}`,
      resources: [id],
      cause,
    });
    this.id = id;
  }
}

/**
 * Adds the reconciler finalizer to a live, not-deleting RSync, whatever its deletion propagation
 * policy: as Config Sync does, Orphan needs the reconciler at deletion too (to release the objects).
 * `known` is a copy just read: when it already carries the finalizer, nothing is requested.
 */
export async function ensureFinalizer(client: KubeClient, identity: SyncIdentity, known?: KubeObject): Promise<void> {
  if (known !== undefined && finalizerAdded(known) === undefined) return;
  await mutateRSync(client, identity, finalizerAdded);
}

/** The RSync with its reconciler finalizer added; undefined when it has it or is being deleted. */
function finalizerAdded(raw: KubeObject): KubeObject | undefined {
  if (raw.metadata.deletionTimestamp !== undefined) return undefined;
  const finalizers = raw.metadata.finalizers ?? [];
  if (finalizers.includes(Finalizer.Reconciler)) return undefined;
  return { ...raw, metadata: { ...raw.metadata, finalizers: [...finalizers, Finalizer.Reconciler] } };
}

/**
 * Runs when the RSync is being deleted and still carries our finalizer. Foreground deletes every
 * managed object (reverse apply order) and waits until they are gone; Orphan (the default) leaves them
 * and strips Config Sync's metadata, so they are no longer managed. Then the ResourceGroup and the
 * finalizer go. Returns false when there was nothing to do.
 */
export async function finalize(ctx: FinalizerContext, raw: KubeObject): Promise<boolean> {
  if (raw.metadata.deletionTimestamp === undefined || !(raw.metadata.finalizers ?? []).includes(Finalizer.Reconciler))
    return false;
  // A suspended sync deletes nothing, its own deletion included: its objects are released (as Flux
  // skips garbage collection of a suspended Kustomization). Resume first to delete them.
  const suspended = isSuspended(raw.metadata.annotations);
  const policy = suspended ? DeletionPropagationPolicy.Orphan : deletionPropagationPolicyOf(raw.metadata.annotations);
  await setFinalizerCondition(ctx, {
    type: SyncConditionType.ReconcilerFinalizing,
    status: "True",
    reason: "ResourcesDeleting",
    message: suspended
      ? "Releasing managed objects (Orphan): the sync is suspended (driftless.dev/suspend), so nothing is deleted"
      : "Deleting managed resource objects",
  });
  try {
    const inventory = new Inventory(ctx.client, ctx.identity);
    const managed = await inventory.read();
    if (policy === DeletionPropagationPolicy.Foreground) await reportReleased(ctx, raw, await deleteAll(ctx, managed));
    else await orphanAll(ctx, managed);
    // Nothing is managed any more: the inventory goes with the sync, as Config Sync's manager deletes it.
    await inventory.delete();
  } catch (error) {
    const failure = error instanceof DriftlessError ? error : new FinalizerError(String(error), [], error);
    // Config Sync's condition: a fixed message, and each object's error in `errors`.
    const perObject = failure instanceof FinalizerError ? failure.objectErrors : [];
    const { errors, errorSummary } = statusErrors(perObject.length > 0 ? perObject : [failure], {
      maxErrors: MaxStatusErrors,
    });
    await setFinalizerCondition(ctx, {
      type: SyncConditionType.ReconcilerFinalizerFailure,
      status: "True",
      reason: "DestroyFailure",
      message: "Failed to delete managed resource objects",
      ...(errors === undefined ? {} : { errors }),
      errorSummary,
    });
    throw failure;
  }
  // As Config Sync's finalizer: both conditions go before the finalizer (the manager's may hold the RSync a while).
  await writeStatus(ctx.client, ctx.identity, (_raw, current) => {
    let conditions = current.conditions as SyncCondition[] | undefined;
    let changed = false;
    for (const type of [SyncConditionType.ReconcilerFinalizerFailure, SyncConditionType.ReconcilerFinalizing]) {
      const removed = removeCondition(conditions, type);
      conditions = [...removed.conditions];
      changed ||= removed.changed;
    }
    return changed ? { ...current, conditions } : undefined;
  });
  await mutateRSync(ctx.client, ctx.identity, (current) => {
    const finalizers = current.metadata.finalizers ?? [];
    if (!finalizers.includes(Finalizer.Reconciler)) return undefined;
    return {
      ...current,
      metadata: { ...current.metadata, finalizers: finalizers.filter((f) => f !== Finalizer.Reconciler) },
    };
  });
  return true;
}

/** Deletes every managed object and waits until they are gone; answers those left in place because still in use. */
async function deleteAll(ctx: FinalizerContext, managed: readonly ObjectId[]): Promise<PruneOutcome[]> {
  // The sync is going: a Namespace or CRD that objects that stay still use is left in place, released.
  const outcomes = await prune(managed, {
    ...ctx.pruneOptions(),
    namespaceInUsePolicy: NamespaceInUsePolicy.Detach,
    // As Config Sync's destroyer: what an object owns goes first (a Deployment's ReplicaSets and Pods).
    propagationPolicy: "Foreground",
    // A dependency held by a dependent still going (depends-on) is Kept: this attempt fails and is retried.
    dependentsTimeoutMs: ctx.waitMs ?? 30_000,
  });
  const failed = outcomes.filter((o) => o.operation === PruneOperation.Failed || o.operation === PruneOperation.Kept);
  if (failed.length > 0) {
    throw new FinalizerError(
      `failed to delete ${failed.length} managed object(s): ${failed.map((f) => describeId(f.id)).join("; ")}`,
      failed.map((f) => f.id),
      failed[0]?.error,
      failed.map((f) => f.error ?? new PruneError(f.id, "not deleted")),
    );
  }
  // Foreground means the sync disappears only after its objects have: wait for their finalizers.
  const deleted = outcomes.filter((o) => o.operation === PruneOperation.Deleted).map((o) => o.id);
  const released = outcomes.filter((o) => o.operation === PruneOperation.Detached && o.error !== undefined);
  const deadline = Date.now() + (ctx.waitMs ?? 30_000);
  for (;;) {
    const remaining: ObjectId[] = [];
    for (const id of deleted) {
      const mapping = await ctx.mapper.mappingForGroupKind(id.group, id.kind);
      if (mapping === undefined) {
        // Gone only when its type is known to be gone; partial discovery proves nothing.
        if ((await ctx.mapper.kindAbsence(id.group, id.kind)).served !== false) remaining.push(id);
      } else if ((await ctx.client.get(mapping, mapping.namespaced ? id.namespace : undefined, id.name)) !== undefined)
        remaining.push(id);
    }
    if (remaining.length === 0) return released;
    if (Date.now() > deadline)
      throw new FinalizerError(
        `waiting for ${remaining.length} managed object(s) to be deleted: ${remaining.slice(0, 5).map(describeId).join("; ")}`,
        remaining,
        undefined,
        remaining.map((id) => new DeletionTimeoutError(id)),
      );
    await delay(200);
  }
}

/**
 * The RSync's status goes with it, so what Foreground left in place (and why) is said by a Warning Event
 * on the RSync and the log.
 */
async function reportReleased(
  ctx: FinalizerContext,
  raw: KubeObject,
  released: readonly PruneOutcome[],
): Promise<void> {
  for (const outcome of released) {
    const message = `left in place, released: ${outcome.error?.message ?? describeId(outcome.id)}`;
    ctx.log.warn("foreground deletion left an object in use in place", { object: idKey(outcome.id), message });
    await recordEvent(ctx.client, ctx.identity, raw, SyncEventReason.Released, message, ctx.log);
  }
}

/**
 * Releases every object still ours; one another sync owns now keeps its metadata (it is theirs). One
 * that cannot be released does not stop the others: each failure is listed, and the deletion retried.
 */
async function orphanAll(ctx: FinalizerContext, managed: readonly ObjectId[]): Promise<void> {
  const failed: UnmanageError[] = [];
  for (const id of managed) {
    const failure = await orphan(ctx, id);
    if (failure !== undefined) failed.push(failure);
  }
  if (failed.length > 0)
    throw new FinalizerError(
      `failed to release ${failed.length} managed object(s): ${failed.map((f) => f.message).join("; ")}`,
      failed.map((f) => f.id),
      failed[0]?.cause,
      failed,
    );
}

async function orphan(ctx: FinalizerContext, id: ObjectId): Promise<UnmanageError | undefined> {
  const mapping = await ctx.mapper.mappingForGroupKind(id.group, id.kind);
  if (mapping === undefined) return undefined;
  const namespace = mapping.namespaced ? id.namespace : undefined;
  for (let attempt = 1; ; attempt++) {
    let live: KubeObject | undefined;
    try {
      live = await ctx.client.get(mapping, namespace, id.name);
    } catch (error) {
      return new UnmanageError(id, "failed to get object", error);
    }
    if (live === undefined || !ownedBy(live, ctx.identity)) return undefined;
    try {
      await unmanage(ctx.client, mapping, live, ctx.lastAppliedAnnotation);
      return undefined;
    } catch (error) {
      // Changed since the read (perhaps taken over): read again and decide again.
      if (!isConflict(error) || attempt >= 4)
        return new UnmanageError(id, "failed to patch object to remove metadata", error);
    }
  }
}

async function setFinalizerCondition(ctx: FinalizerContext, input: Parameters<typeof setCondition>[1]): Promise<void> {
  await writeStatus(ctx.client, ctx.identity, (_raw, current) => {
    const { conditions, changed } = setCondition(current.conditions as SyncCondition[] | undefined, input, new Date());
    return changed ? { ...current, conditions: [...conditions] } : undefined;
  });
}

/** Read-modify-write of the RSync (metadata only), re-reading on 409. */
async function mutateRSync(
  client: KubeClient,
  identity: SyncIdentity,
  change: (raw: KubeObject) => KubeObject | undefined,
): Promise<void> {
  const mapping = rsyncMapping(identity.kind);
  for (let attempt = 0; ; attempt++) {
    const raw = await client.get(mapping, identity.namespace, identity.name);
    if (raw === undefined) return;
    const next = change(raw);
    if (next === undefined) return;
    try {
      await client.replace(mapping, next);
      return;
    } catch (error) {
      if (isNotFound(error)) return;
      if (!isConflict(error) || attempt >= 4) throw error;
    }
  }
}
