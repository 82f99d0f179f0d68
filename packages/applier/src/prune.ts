import {
  DriftlessError,
  ErrorClass,
  Kind,
  KnvCode,
  LifecycleDeletionValue,
  ManagedAnnotation,
  ManagedValue,
  UserAnnotation,
  inventoryId,
  managerAnnotationValue,
  toDriftlessError,
} from "@driftless/api";
import {
  failureText,
  isConflict,
  isNotFound,
  type DeleteResult,
  type KubeClient,
  type KubeObject,
  type ResourceMapping,
  type RestMapper,
} from "@driftless/kube";
import { mapLimit } from "./concurrency.ts";
import { CrdInUseError, customResourcesLeft } from "./crd-usage.ts";
import { stripManagement } from "./decorate.ts";
import type { SyncIdentity } from "./desired.ts";
import { describeId, idKey, type ObjectId } from "./object-id.ts";
import { isRootManager, managementConflictMessage } from "./precedence.ts";
import { dependentsStillThere } from "./dependents-still-there.ts";
import {
  DependentHold,
  DependentNotDeletedError,
  dependentsFirst,
  dependentsOf,
  type PruneNode,
} from "./prune-order.ts";

export const PruneOperation = {
  Deleted: "deleted",
  /**
   * Left on the cluster without our metadata (`client.lifecycle.config.k8s.io/deletion: detach`, or a
   * Namespace or CRD still in use when the sync itself goes: then `error` says why).
   */
  Detached: "detached",
  /**
   * A Namespace or CRD that objects that stay still use, or an object a declared one depends on: neither
   * deleted nor released; kept in the inventory and reported.
   */
  Kept: "kept",
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
  /** Deleted by an earlier pass and still there (finalizers): not deleted or waited for again, kept in the inventory. */
  readonly terminating?: boolean;
  /** Deleted, and gone at once by the server's answer (no finalizer or grace period held it): nothing to wait for. */
  readonly gone?: boolean;
}

/**
 * What happens to a Namespace that leaves the source while objects that stay are still in it, and to a
 * CRD while custom resources of it stay: deleting either would delete them.
 */
export const NamespaceInUsePolicy = {
  /** A pass: keep it managed and in the inventory, report it, and try again on the next pass. */
  Keep: "keep",
  /** The sync itself is being deleted: leave it in place without our metadata. */
  Detach: "detach",
} as const;
export type NamespaceInUsePolicy = (typeof NamespaceInUsePolicy)[keyof typeof NamespaceInUsePolicy];

export interface PruneOptions {
  readonly client: KubeClient;
  readonly mapper: RestMapper;
  readonly sync: SyncIdentity;
  readonly lastAppliedAnnotation: string;
  readonly concurrency?: number;
  /**
   * Says whether a namespace holds objects other than `removed` (those this prune deleted or found
   * gone). Anything else it holds (detached, failed, abandoned, someone else's) stays, so the
   * namespace must stay too: deleting a Namespace deletes everything in it.
   */
  readonly namespaceInUse: (namespace: string, removed: ReadonlySet<string>) => Promise<boolean>;
  /** For a Namespace or a CRD still in use (the name predates CRDs). Default `keep`. */
  readonly namespaceInUsePolicy?: NamespaceInUsePolicy;
  /** A live object's `config.kubernetes.io/depends-on` references; without it depends-on orders nothing. */
  readonly dependsOn?: (live: KubeObject) => readonly ObjectId[];
  /** How long a dependency waits for its deleted dependents to be gone before it is skipped. Default 5 min. */
  readonly dependentsTimeoutMs?: number;
  /** Ends that wait early (the reconciler stopping): the dependency is skipped. */
  readonly signal?: AbortSignal;
  /**
   * How the API server deletes what an object owns. Default `Background`, as Config Sync's prune; its
   * Foreground deletion of a sync uses `Foreground`, so a Deployment is gone only once its Pods are.
   */
  readonly propagationPolicy?: "Background" | "Foreground";
  /**
   * Candidates a declared object still depends on (by idKey): kept, and in the inventory, with the error
   * (cli-utils skips the prune of a dependency whose dependent is applied).
   */
  readonly heldForDependents?: ReadonlyMap<string, DriftlessError>;
}

/**
 * A delete the server refused or that failed. Like every error of Config Sync's prune and delete events, it
 * names the object in its message only: no errorResources (the inventory has no version to give them).
 * Its class is the failure's, as an apply's: a lasting refusal (RBAC, an admission policy) waits for the
 * next poll, where retrying it with backoff would send the same refused DELETE again and again.
 */
export class PruneError extends DriftlessError {
  constructor(id: ObjectId, cause: unknown) {
    super({
      code: KnvCode.Apply,
      errorClass: toDriftlessError(cause).errorClass,
      message: `failed to prune ${describeId(id)}: ${failureText(cause)}`,
      cause,
    });
  }
}

/** The server could not say whether an object's type exists (partial discovery): it is neither pruned nor forgotten. */
export class UnknownTypeError extends DriftlessError {
  constructor(id: ObjectId, why: string) {
    super({
      code: KnvCode.ApiServer,
      errorClass: ErrorClass.Retry,
      message: `cannot tell whether ${describeId(id)} still exists, so it is kept in the inventory: ${why}`,
    });
  }
}

/**
 * A Namespace left Git but something that stays is still in it (Config Sync's wording and code; as its skip
 * errors, no errorResources).
 * Retried: objects on their way out (children the garbage collector has not reached yet) clear by
 * themselves; anything else waits for a person to remove it or declare the Namespace again.
 */
export class NamespaceInUseError extends DriftlessError {
  constructor(id: ObjectId) {
    super({
      code: KnvCode.Apply,
      errorClass: ErrorClass.Retry,
      message: `skipped delete of ${describeId(id)}: namespace still in use: ${id.name}`,
    });
  }
}

/**
 * A Namespace this RootSync held implicitly, taken by another RootSync that declares it in a file without
 * `client.lifecycle.config.k8s.io/deletion: detach`. Config Sync's root reconciler reports the management
 * conflict until that declaration says the Namespace may be left behind (its e2e TestAdoptImplicitNamespace);
 * so does driftless, keeping it in the inventory meanwhile, but never deletes it (Config Sync's prune tries,
 * stopped only by the Namespace being in use). Retried, so a declaration gaining detach clears it within the
 * backoff rather than at the next resync.
 */
export class ImplicitNamespaceTakenError extends DriftlessError {
  constructor(id: ObjectId, live: KubeObject, sync: SyncIdentity) {
    const annotations = live.metadata.annotations ?? {};
    super({
      code: KnvCode.ManagementConflict,
      errorClass: ErrorClass.Retry,
      message: managementConflictMessage(
        managerAnnotationValue(sync.kind, sync.namespace, sync.name),
        annotations[ManagedAnnotation.Manager] ?? "",
      ),
      // As Config Sync's remediator names it: the object as its new holder declares it.
      resources: [
        { ...id, version: "v1", sourcePath: annotations[ManagedAnnotation.SourcePath] ?? "", sourcePathRooted: true },
      ],
    });
  }
}

/** Another inventory's object now: abandoned, never deleted; reported while it is an implicit Namespace taken without detach. */
function notOurs(id: ObjectId, live: KubeObject, options: PruneOptions): PruneOutcome {
  if (!takenWithoutDetach(id, live, options)) return { id, operation: PruneOperation.Abandoned };
  return { id, operation: PruneOperation.Kept, error: new ImplicitNamespaceTakenError(id, live, options.sync) };
}

/** Only a RootSync's passes: a sync being deleted lets every object another sync holds go, reporting nothing. */
function takenWithoutDetach(id: ObjectId, live: KubeObject, options: PruneOptions): boolean {
  const { sync } = options;
  if (sync.kind !== Kind.RootSync || !isNamespace(id)) return false;
  if ((options.namespaceInUsePolicy ?? NamespaceInUsePolicy.Keep) !== NamespaceInUsePolicy.Keep) return false;
  const annotations = live.metadata.annotations ?? {};
  const manager = annotations[ManagedAnnotation.Manager];
  return (
    annotations[ManagedAnnotation.Managed] === ManagedValue.Enabled &&
    manager !== undefined &&
    isRootManager(manager) &&
    manager !== managerAnnotationValue(sync.kind, sync.namespace, sync.name) &&
    annotations[UserAnnotation.LifecycleDeletion] !== LifecycleDeletionValue.Detach
  );
}

/** Deletion order is the reverse of apply order: contents, then Namespaces, then CRDs. */
function pruneRank(id: ObjectId): number {
  if (isCrd(id)) return 2;
  if (isNamespace(id)) return 1;
  return 0;
}

function isCrd(id: ObjectId): boolean {
  return id.kind === "CustomResourceDefinition" && id.group === "apiextensions.k8s.io";
}

function isNamespace(id: ObjectId): boolean {
  return id.kind === "Namespace" && id.group === "";
}

/**
 * Deletes objects that left the source, but only those whose live copy still carries this sync's
 * owning-inventory annotation: an object adopted by someone else, or re-created by hand, is never ours to delete.
 */
export async function prune(candidates: readonly ObjectId[], options: PruneOptions): Promise<PruneOutcome[]> {
  const held = options.heldForDependents ?? new Map<string, DriftlessError>();
  const outcomes: PruneOutcome[] = [];
  for (const id of candidates) {
    const error = held.get(idKey(id));
    if (error !== undefined) outcomes.push({ id, operation: PruneOperation.Kept, error });
  }
  const free = candidates.filter((id) => !held.has(idKey(id)));
  const ranks = [0, 1, 2].map((rank) => free.filter((id) => pruneRank(id) === rank));
  // Only what is really gone may be ignored by the in-use checks; ranks run in order, so a
  // Namespace is decided after everything in it, and a CRD after its custom resources.
  const removed = new Set<string>();
  for (const batch of ranks) {
    for (const outcome of await pruneBatch(batch, removed, options)) {
      if (outcome.operation === PruneOperation.Deleted || outcome.operation === PruneOperation.Gone)
        removed.add(idKey(outcome.id));
      outcomes.push(outcome);
    }
  }
  return outcomes;
}

/** A candidate read and still ours, with what acting on it needs (not the object: a batch may hold 10,000). */
interface Candidate extends PruneNode {
  readonly mapping: ResourceMapping;
  readonly namespace: string | undefined;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly detach: boolean;
  /** Already being deleted (a deletionTimestamp), by an earlier pass or by someone else. */
  readonly terminating: boolean;
}

/**
 * One rank. Every candidate is read first, since depends-on is on the live objects; then dependents go
 * before their dependencies, and a dependency only once its deleted dependents are gone (Config Sync's order).
 */
async function pruneBatch(
  batch: readonly ObjectId[],
  removed: ReadonlySet<string>,
  options: PruneOptions,
): Promise<PruneOutcome[]> {
  const concurrency = options.concurrency ?? 16;
  const outcomes: PruneOutcome[] = [];
  const read: Candidate[] = [];
  for (const result of await mapLimit(batch, concurrency, (id) => readCandidate(id, options))) {
    if ("operation" in result) outcomes.push(result);
    else read.push(result);
  }
  const dependents = dependentsOf(read);
  const waves = dependentsFirst(read, dependents);
  // Only a dependent of another candidate holds anything back (and is waited for).
  const holding = new Set([...dependents.values()].flat().map((c) => idKey(c.id)));
  const holds = new Map<string, DependentHold>();
  for (const [index, wave] of waves.entries()) {
    const results = await mapLimit(wave, concurrency, (candidate): Promise<PruneOutcome> => {
      for (const dependent of dependents.get(idKey(candidate.id)) ?? []) {
        const hold = holds.get(idKey(dependent.id));
        if (hold !== undefined) {
          const error = new DependentNotDeletedError(candidate.id, dependent.id, hold);
          return Promise.resolve({ id: candidate.id, operation: PruneOperation.Kept, error });
        }
      }
      return act(candidate, removed, options);
    });
    outcomes.push(...results);
    if (index < waves.length - 1) await holdBack(wave, results, holding, holds, options);
  }
  return outcomes;
}

/** Records which of a wave's dependents hold their dependencies back: not deleted, or not gone in time. */
async function holdBack(
  wave: readonly Candidate[],
  results: readonly PruneOutcome[],
  holding: ReadonlySet<string>,
  holds: Map<string, DependentHold>,
  options: PruneOptions,
): Promise<void> {
  const deleted: Candidate[] = [];
  for (const [i, outcome] of results.entries()) {
    const candidate = wave[i];
    if (candidate === undefined || !holding.has(idKey(candidate.id))) continue;
    if (outcome.operation === PruneOperation.Failed) holds.set(idKey(candidate.id), DependentHold.Failed);
    else if (outcome.operation === PruneOperation.Kept) holds.set(idKey(candidate.id), DependentHold.Skipped);
    else if (outcome.operation === PruneOperation.Deleted && outcome.gone !== true) deleted.push(candidate);
  }
  for (const candidate of await dependentsStillThere(deleted, options))
    holds.set(idKey(candidate.id), DependentHold.Timeout);
}

function unknownType(id: ObjectId, why: string): PruneOutcome {
  return { id, operation: PruneOperation.Failed, error: new UnknownTypeError(id, why) };
}

/** Attempts at one object when its resourceVersion keeps changing between our read and our write. */
const maxAttempts = 4;

async function readCandidate(id: ObjectId, options: PruneOptions): Promise<Candidate | PruneOutcome> {
  try {
    let mapping = await options.mapper.mappingForGroupKind(id.group, id.kind);
    if (mapping === undefined) {
      // Its type is gone, and so is it; unless discovery could not say, when nothing is concluded.
      const absence = await options.mapper.kindAbsence(id.group, id.kind);
      if (absence.served === "unknown") return unknownType(id, absence.why);
      if (absence.served === false) return { id, operation: PruneOperation.Gone };
      mapping = await options.mapper.mappingForGroupKind(id.group, id.kind);
      if (mapping === undefined) return unknownType(id, "discovery lists it, but not yet in the mapper");
    }
    // Recorded at the other scope: its CRD was created again since, which took the object with it. Read at this
    // scope, the address would be another object's (a declared one of the same name, now cluster-scoped).
    if (mapping.namespaced !== ((id.namespace ?? "") !== "")) return { id, operation: PruneOperation.Gone };
    const namespace = mapping.namespaced ? id.namespace : undefined;
    // Read fresh, not from a cache: a delete decision must rest on the live annotation.
    const live = await options.client.get(mapping, namespace, id.name);
    if (live === undefined) return { id, operation: PruneOperation.Gone };
    if (!ownedBy(live, options.sync)) return notOurs(id, live, options);
    return {
      id,
      mapping,
      namespace,
      uid: live.metadata.uid ?? "",
      resourceVersion: live.metadata.resourceVersion ?? "",
      detach: live.metadata.annotations?.[UserAnnotation.LifecycleDeletion] === LifecycleDeletionValue.Detach,
      dependsOn: options.dependsOn?.(live) ?? [],
      terminating: live.metadata.deletionTimestamp !== undefined,
    };
  } catch (error) {
    if (isNotFound(error)) return { id, operation: PruneOperation.Gone };
    return { id, operation: PruneOperation.Failed, error: new PruneError(id, error) };
  }
}

async function act(candidate: Candidate, removed: ReadonlySet<string>, options: PruneOptions): Promise<PruneOutcome> {
  const { id, mapping, namespace } = candidate;
  // What was read decides a plain delete; a release or an in-use check reads the whole object again.
  const plainDelete = !candidate.detach && pruneRank(id) === 0;
  // Deleted already, its finalizers still running: another DELETE would change nothing.
  if (candidate.terminating && !candidate.detach) return { id, operation: PruneOperation.Deleted, terminating: true };
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        if (attempt > 1 || !plainDelete) return await decideAndAct(id, mapping, namespace, removed, options);
        return deletedOutcome(id, await deleteExactly(options, mapping, namespace, id.name, candidate));
      } catch (error) {
        // The object changed between the read and the write (maybe a new owner): read it and decide again.
        if (!isConflict(error) || attempt >= maxAttempts) throw error;
      }
    }
  } catch (error) {
    if (isNotFound(error)) return { id, operation: PruneOperation.Gone };
    return { id, operation: PruneOperation.Failed, error: new PruneError(id, error) };
  }
}

/** Both preconditions: the object we read, unchanged since (a new owner's write changes the version). */
function deleteExactly(
  options: Pick<PruneOptions, "client" | "propagationPolicy">,
  mapping: ResourceMapping,
  namespace: string | undefined,
  name: string,
  read: { readonly uid: string; readonly resourceVersion: string },
): Promise<DeleteResult> {
  return options.client.deleteWithResult(mapping, namespace, name, {
    propagationPolicy: options.propagationPolicy ?? "Background",
    preconditions: { uid: read.uid, resourceVersion: read.resourceVersion },
  });
}

async function decideAndAct(
  id: ObjectId,
  mapping: ResourceMapping,
  namespace: string | undefined,
  removed: ReadonlySet<string>,
  options: PruneOptions,
): Promise<PruneOutcome> {
  // Read fresh, not from a cache: a delete decision must rest on the live annotation.
  const live = await options.client.get(mapping, namespace, id.name);
  if (live === undefined) return { id, operation: PruneOperation.Gone };
  if (!ownedBy(live, options.sync)) return notOurs(id, live, options);
  const annotations = live.metadata.annotations ?? {};
  if (annotations[UserAnnotation.LifecycleDeletion] === LifecycleDeletionValue.Detach) {
    await unmanage(options.client, mapping, live, options.lastAppliedAnnotation);
    return { id, operation: PruneOperation.Detached };
  }
  const inUse = await inUseError(id, live, removed, options);
  if (inUse !== undefined) {
    if (options.namespaceInUsePolicy === NamespaceInUsePolicy.Detach) {
      await unmanage(options.client, mapping, live, options.lastAppliedAnnotation);
      return { id, operation: PruneOperation.Detached, error: inUse };
    }
    return { id, operation: PruneOperation.Kept, error: inUse };
  }
  const result = await deleteExactly(options, mapping, namespace, id.name, {
    uid: live.metadata.uid ?? "",
    resourceVersion: live.metadata.resourceVersion ?? "",
  });
  return deletedOutcome(id, result);
}

/** Deleted; gone already unless the server answered that finalizers or a grace period hold it. */
function deletedOutcome(id: ObjectId, result: DeleteResult): PruneOutcome {
  return result === "deleting"
    ? { id, operation: PruneOperation.Deleted }
    : { id, operation: PruneOperation.Deleted, gone: true };
}

/**
 * Why deleting `id` would take objects that stay, or undefined. Judged after the lower ranks are done,
 * so what this prune removed (`removed`) never counts.
 */
async function inUseError(
  id: ObjectId,
  live: KubeObject,
  removed: ReadonlySet<string>,
  options: PruneOptions,
): Promise<DriftlessError | undefined> {
  if (isNamespace(id))
    return (await options.namespaceInUse(id.name, removed)) ? new NamespaceInUseError(id) : undefined;
  if (!isCrd(id)) return undefined;
  const left = await customResourcesLeft(options.client, live, removed);
  return left.count > 0 ? new CrdInUseError(id, left) : undefined;
}

/** The live object carries this sync's owning-inventory annotation. */
export function ownedBy(live: KubeObject, sync: SyncIdentity): boolean {
  return live.metadata.annotations?.[ManagedAnnotation.OwningInventory] === inventoryId(sync.namespace, sync.name);
}

/**
 * Removes driftless metadata from a live object, leaving the object itself in place. The write
 * carries the live resourceVersion, so a change made since it was read is a 409, never overwritten.
 */
export async function unmanage(
  client: KubeClient,
  mapping: ResourceMapping,
  live: KubeObject,
  lastAppliedAnnotation: string,
): Promise<void> {
  const stripped = stripManagement(live, lastAppliedAnnotation);
  if (stripped === undefined) return;
  await client.update(mapping, live, stripped as KubeObject);
}
