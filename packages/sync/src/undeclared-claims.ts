/**
 * Objects that say this sync manages them while its source does not declare them: made or copied by
 * hand with `configmanagement.gke.io/managed: enabled`, their own `configsync.gke.io/resource-id` and
 * this sync's `configsync.gke.io/manager`. Config Sync's remediator processes such an object "if we are
 * the manager regardless if it is declared or not" and deletes it (diff.go's deleteType); prune never
 * sees it, since it is in no inventory. The remediator settles them here, under driftless's prune rules.
 */
import {
  inventoryId,
  isSpecialNamespace,
  LifecycleDeletionValue,
  ManagedAnnotation,
  ManagedValue,
  UserAnnotation,
  isSuspended,
  managerAnnotationValue,
  resourceId,
} from "@driftless/api";
import { customResourcesLeft, idKey, Inventory, unmanage, type ObjectId, type SyncIdentity } from "@driftless/applier";
import { isConflict, isNotFound, type KubeClient, type KubeObject, type ResourceMapping } from "@driftless/kube";
import type { Logger } from "./log.ts";
import { namespaceInUse } from "./namespace-usage.ts";
import { rsyncMapping } from "./rsync.ts";

/** The identity of a live object seen through `mapping`. */
export function idOf(mapping: ResourceMapping, object: KubeObject): ObjectId {
  const namespace = mapping.namespaced ? (object.metadata.namespace ?? "") : "";
  return { group: mapping.group, kind: mapping.kind, namespace, name: object.metadata.name };
}

/**
 * Config Sync's IsManager: management enabled, the resource-id of the object itself (a copy of another
 * object's annotations does not count) and this sync as the manager. The ApplySet label only lets the
 * watch see it.
 */
export function claimsSync(object: KubeObject, mapping: ResourceMapping, sync: SyncIdentity): boolean {
  const annotations = object.metadata.annotations;
  if (annotations === undefined || annotations[ManagedAnnotation.Managed] !== ManagedValue.Enabled) return false;
  if (annotations[ManagedAnnotation.Manager] !== managerAnnotationValue(sync.kind, sync.namespace, sync.name))
    return false;
  return annotations[ManagedAnnotation.ResourceId] === resourceId(idOf(mapping, object));
}

export const ClaimAction = {
  /** Not ours to act on (owned by another object, being deleted, the sync's own object). */
  Leave: "leave",
  /** Left in place without our metadata (Config Sync's Abandon). */
  Release: "release",
  Delete: "delete",
} as const;
export type ClaimAction = (typeof ClaimAction)[keyof typeof ClaimAction];

/** What Config Sync's deleteType does with a claiming object nobody declares, and why. */
export function claimAction(
  live: KubeObject,
  mapping: ResourceMapping,
  sync: SyncIdentity,
): { readonly action: ClaimAction; readonly reason: string } {
  const id = idOf(mapping, live);
  if (live.metadata.deletionTimestamp !== undefined)
    return { action: ClaimAction.Leave, reason: "already being deleted" };
  // It may copy our metadata from its owner; the owner's deletion takes it.
  if ((live.metadata.ownerReferences ?? []).length > 0)
    return { action: ClaimAction.Leave, reason: "it has ownerReferences" };
  if (isOwnSync(id, sync)) return { action: ClaimAction.Leave, reason: "a reconciler never deletes its own sync" };
  // Prune's rule: another inventory's object is someone else's (prune abandons it); absent, a hand-made copy.
  const owner = live.metadata.annotations?.[ManagedAnnotation.OwningInventory];
  if (owner !== undefined && owner !== inventoryId(sync.namespace, sync.name))
    return { action: ClaimAction.Leave, reason: `another inventory owns it (${owner})` };
  if (live.metadata.annotations?.[UserAnnotation.LifecycleDeletion] === LifecycleDeletionValue.Detach)
    return { action: ClaimAction.Release, reason: `${UserAnnotation.LifecycleDeletion}: detach` };
  if (id.group === "" && id.kind === "Namespace" && isSpecialNamespace(id.name))
    return { action: ClaimAction.Release, reason: "a special Namespace is never deleted" };
  return { action: ClaimAction.Delete, reason: "not declared in the source, but says this sync manages it" };
}

function isOwnSync(id: ObjectId, sync: SyncIdentity): boolean {
  return (
    id.group === rsyncMapping(sync.kind).group &&
    id.kind === sync.kind &&
    id.namespace === sync.namespace &&
    id.name === sync.name
  );
}

/** What settling a claim did. `waiting` is tried again after the next pass. */
export type ClaimOutcome =
  | { readonly operation: "deleted" | "released"; readonly reason: string }
  | { readonly operation: "none"; readonly reason: string }
  | { readonly operation: "waiting"; readonly reason: string };

export interface ClaimContext {
  readonly client: KubeClient;
  readonly sync: SyncIdentity;
  readonly inventory: Pick<Inventory, "read">;
  readonly lastAppliedAnnotation: string;
  /** Still undeclared with no pass changing the declarations: asked again right before each write. */
  readonly stillUndeclared: () => boolean;
}

/** Attempts when the object changes between our read and our write (a 409 on the preconditions). */
const maxAttempts = 4;

/**
 * Deletes or releases one claiming, undeclared object, deciding on a fresh read. Waits while its
 * inventory lists it (the pass prunes it first, under prune's holds and order), while the sync is
 * suspended, or while a Namespace or CRD still holds objects (deleting it would delete them).
 */
export async function settleClaim(
  ctx: ClaimContext,
  mapping: ResourceMapping,
  namespace: string | undefined,
  name: string,
): Promise<ClaimOutcome> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await settleOnce(ctx, mapping, namespace, name);
    } catch (error) {
      if (isNotFound(error)) return { operation: "none", reason: "gone" };
      if (!isConflict(error) || attempt >= maxAttempts) throw error;
    }
  }
}

async function settleOnce(
  ctx: ClaimContext,
  mapping: ResourceMapping,
  namespace: string | undefined,
  name: string,
): Promise<ClaimOutcome> {
  const live = await ctx.client.get(mapping, namespace, name);
  if (live === undefined) return { operation: "none", reason: "gone" };
  if (!claimsSync(live, mapping, ctx.sync)) return { operation: "none", reason: "no longer claims this sync" };
  const { action, reason } = claimAction(live, mapping, ctx.sync);
  if (action === ClaimAction.Leave) return { operation: "none", reason };
  const blocked = await syncBlocks(ctx);
  if (blocked !== undefined) return blocked;
  const key = idKey(idOf(mapping, live));
  if ((await ctx.inventory.read()).some((id) => idKey(id) === key))
    return { operation: "waiting", reason: "its inventory lists it: a pass prunes it first, under prune's holds" };
  if (action === ClaimAction.Delete) {
    const inUse = await stillHolds(ctx.client, mapping, live);
    if (inUse !== undefined) return { operation: "waiting", reason: inUse };
  }
  if (!ctx.stillUndeclared()) return { operation: "waiting", reason: "the declarations are changing" };
  if (action === ClaimAction.Release) {
    await unmanage(ctx.client, mapping, live, ctx.lastAppliedAnnotation);
    return { operation: "released", reason };
  }
  // Exactly the object read: a write since (a pass adopting it, its owner changing) is a 409, and read again.
  await ctx.client.deleteWithResult(mapping, namespace, name, {
    propagationPolicy: "Background",
    preconditions: { uid: live.metadata.uid ?? "", resourceVersion: live.metadata.resourceVersion ?? "" },
  });
  return { operation: "deleted", reason };
}

/** A sync being deleted settles its objects in its finalizer; a suspended one changes nothing until resumed. */
async function syncBlocks(ctx: ClaimContext): Promise<ClaimOutcome | undefined> {
  const { sync } = ctx;
  const rsync = await ctx.client.get(rsyncMapping(sync.kind), sync.namespace, sync.name);
  if (rsync === undefined || rsync.metadata.deletionTimestamp !== undefined)
    return { operation: "none", reason: "the sync is being deleted" };
  if (isSuspended(rsync.metadata.annotations)) return { operation: "waiting", reason: "the sync is suspended" };
  return undefined;
}

/** Why deleting a Namespace or CRD would take objects with it, as prune's in-use rule; undefined when it would not. */
async function stillHolds(client: KubeClient, mapping: ResourceMapping, live: KubeObject): Promise<string | undefined> {
  if (mapping.group === "" && mapping.kind === "Namespace")
    return (await namespaceInUse(client, live.metadata.name, new Set())) ? "namespace still in use" : undefined;
  if (mapping.group === "apiextensions.k8s.io" && mapping.kind === "CustomResourceDefinition") {
    const left = await customResourcesLeft(client, live, new Set());
    return left.count > 0 ? `${left.count} custom resources of it remain` : undefined;
  }
  return undefined;
}

/** Where an object was seen: enough to read it again. */
export interface Seen {
  readonly mapping: ResourceMapping;
  readonly namespace: string | undefined;
  readonly name: string;
}

export interface UndeclaredClaimsOptions {
  /** The watches' client (asked for only when a claim is settled). */
  readonly client: () => KubeClient;
  readonly sync: SyncIdentity;
  readonly lastAppliedAnnotation: string;
  readonly log: Logger;
  /** Whether the object is declared now; undefined before the first declaration, when nothing is known to be undeclared. */
  readonly declared: (key: string) => boolean | undefined;
  readonly declarationsChanging: () => boolean;
}

/**
 * The remediator's claims: each settled at once when nothing is changing the declarations, one at a
 * time per object; one that must wait (or failed) is tried again after the next pass.
 */
/** Claims settled at once (each is a few reads and a write), as prune bounds its deletes. */
const maxSettling = 16;
/** Claims kept waiting or queued: beyond it a forged flood is not remembered (a later event or relist brings one back). */
const maxRemembered = 10_000;

export class UndeclaredClaims {
  private readonly options: UndeclaredClaimsOptions;
  private readonly waiting = new Map<string, Seen>();
  /** Claims ready to settle while `maxSettling` are being settled. */
  private readonly queued = new Map<string, Seen>();
  /** Keys whose settling failed: warned once, then at debug until one succeeds. */
  private readonly warned = new Set<string>();
  /** Claims being settled now, and whether another event arrived meanwhile. */
  private readonly settling = new Map<string, boolean>();
  private inventory: Inventory | undefined;

  constructor(options: UndeclaredClaimsOptions) {
    this.options = options;
  }

  /** Decided on an event's copy first: most events of undeclared objects (a prune's last ones) cost no read. */
  mayClaim(object: KubeObject, mapping: ResourceMapping): boolean {
    const sync = this.options.sync;
    return claimsSync(object, mapping, sync) && claimAction(object, mapping, sync).action !== ClaimAction.Leave;
  }

  /**
   * After every pass: the claims still waiting, but those in `skip` (seen again during it, decided by the
   * caller), 16 at a time. A time throttle here left claims a pass had just unblocked waiting.
   */
  retryWaiting(skip: ReadonlySet<string>): void {
    for (const [key, seen] of [...this.waiting]) if (!skip.has(key)) this.claim(key, seen);
  }

  claim(key: string, seen: Seen): void {
    this.queued.delete(key);
    const declared = this.options.declared(key);
    if (declared === true) {
      this.waiting.delete(key);
      this.queued.delete(key);
      return;
    }
    if (declared === undefined || this.options.declarationsChanging()) {
      this.wait(key, seen);
      return;
    }
    if (this.settling.has(key)) {
      this.settling.set(key, true);
      return;
    }
    this.waiting.delete(key);
    if (this.settling.size >= maxSettling) {
      if (this.remembered() < maxRemembered) this.queued.set(key, seen);
      return;
    }
    this.settle(key, seen);
  }

  private settle(key: string, seen: Seen): void {
    this.settling.set(key, false);
    this.queued.delete(key);
    void settleClaim(this.context(key), seen.mapping, seen.namespace, seen.name)
      .then(
        (outcome) => {
          this.warned.delete(key);
          this.report(key, seen, outcome);
        },
        (error: unknown) => {
          this.wait(key, seen);
          const fields = { object: key, error: String(error) };
          const message = "could not settle an undeclared object claiming this sync; trying after the next pass";
          if (this.warned.has(key)) this.options.log.debug(message, fields);
          else if (this.warned.size < maxRemembered) {
            this.warned.add(key);
            this.options.log.warn(message, fields);
          }
        },
      )
      .finally(() => {
        const again = this.settling.get(key) === true;
        this.settling.delete(key);
        if (again && !this.waiting.has(key)) this.claim(key, seen);
        this.drainQueued();
      });
  }

  /**
   * Fills the free places from the queue. A queued claim may settle nothing (declared since, or the
   * declarations changing), so one per finished settle could leave the rest queued with none settling.
   */
  private drainQueued(): void {
    for (const [key, seen] of this.queued) {
      if (this.settling.size >= maxSettling) return;
      this.claim(key, seen);
    }
  }

  private wait(key: string, seen: Seen): void {
    if (this.waiting.has(key) || this.remembered() < maxRemembered) this.waiting.set(key, seen);
  }

  private remembered(): number {
    return this.waiting.size + this.queued.size;
  }

  private report(key: string, seen: Seen, outcome: ClaimOutcome): void {
    const { log } = this.options;
    if (outcome.operation === "waiting") {
      this.wait(key, seen);
      log.debug("an undeclared object claiming this sync waits", { object: key, reason: outcome.reason });
    } else if (outcome.operation !== "none")
      log.info(`${outcome.operation} an object that claims this sync but is not declared`, {
        object: key,
        reason: outcome.reason,
      });
  }

  private context(key: string): ClaimContext {
    const client = this.options.client();
    this.inventory ??= new Inventory(client, this.options.sync);
    return {
      client,
      sync: this.options.sync,
      inventory: this.inventory,
      lastAppliedAnnotation: this.options.lastAppliedAnnotation,
      stillUndeclared: () => this.options.declared(key) === false && !this.options.declarationsChanging(),
    };
  }
}
