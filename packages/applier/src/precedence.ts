import {
  DriftlessError,
  ErrorClass,
  KnvCode,
  Kind,
  ManagedAnnotation,
  ManagedValue,
  RootManagerScope,
  RootSyncNamespace,
  UserAnnotation,
  LifecycleDeletionValue,
  inventoryId,
  managerAnnotationValue,
} from "@driftless/api";
import { declaredResource, type DesiredObject, type SyncIdentity } from "./desired.ts";

/**
 * Another reconciler manages the object and this one may not take it over (Config Sync's KNV1060):
 * it is left alone and reported on this sync's status.
 */
export class ManagementConflictError extends DriftlessError {
  /** Manager annotation values: the reconciler that holds the object, and the one that reports it. */
  readonly currentManager: string;
  readonly desiredManager: string;

  constructor(desired: DesiredObject, currentManager: string, desiredManager: string) {
    super({
      code: KnvCode.ManagementConflict,
      errorClass: ErrorClass.Terminal,
      message: managementConflictMessage(desiredManager, currentManager),
      resources: [declaredResource(desired)],
    });
    this.currentManager = currentManager;
    this.desiredManager = desiredManager;
  }
}

/**
 * Config Sync's KNV1060 sentence, word for word (users match on it). The object follows in status as Config
 * Sync prints it (source, namespace, name, group, version, kind: api's toConfigSyncError, from the error's resource).
 */
export function managementConflictMessage(desiredManager: string, currentManager: string): string {
  return (
    `The "${desiredManager}" reconciler detected a management conflict with the "${currentManager}" reconciler. ` +
    "Remove the object from one of the sources of truth so that the object is only managed by one reconciler."
  );
}

/** A manager annotation naming a RootSync (`:root`, `:root_<name>`). */
export function isRootManager(manager: string): boolean {
  return manager === RootManagerScope || manager.startsWith(`${RootManagerScope}_`);
}

/**
 * The manager that keeps `sync` from managing an object with these live annotations, or undefined
 * when it may. Config Sync's precedence: an object nobody (enabled) manages is anyone's; a RootSync
 * may take over one a RepoSync manages, never one another RootSync manages; a RepoSync takes over
 * nothing. So a RootSync and a RepoSync declaring one object end with the RootSync holding it and
 * the RepoSync reporting the conflict, instead of the two rewriting it in turn. One exception, given
 * `declared`: a Namespace another RootSync holds only implicitly is taken by a RootSync declaring it in a file.
 * The owning inventory decides too: the manager value of `root-sync` and `repo-sync` of one kind and
 * namespace is the same bare scope, so two such syncs would each read the other's object as their own.
 */
export function conflictingManager(
  sync: SyncIdentity,
  annotations: Readonly<Record<string, string>>,
  declared?: DeclaredAt,
): string | undefined {
  if (declared !== undefined && adoptsImplicitNamespace(sync, annotations, declared)) return undefined;
  return managerConflict(sync, annotations) ?? inventoryConflict(sync, annotations);
}

/** What precedence reads of the declaration being applied: which object, and the file declaring it ("" for none). */
export type DeclaredAt = Pick<DesiredObject, "id" | "sourcePath">;

/**
 * A RootSync whose source declares a Namespace takes it from another RootSync that holds it only
 * implicitly (namespaceStrategy implicit: declared by the reconciler, no file), as Config Sync's
 * AdoptAll lets it. No source declares such a Namespace, so nobody loses a declaration: the holder's
 * next pass sees it is no longer its own and stops declaring it, and its prune, finding another
 * inventory's annotation on it, drops it from its inventory and leaves it to its new owner.
 */
function adoptsImplicitNamespace(
  sync: SyncIdentity,
  annotations: Readonly<Record<string, string>>,
  declared: DeclaredAt,
): boolean {
  const { group, kind } = declared.id;
  if (sync.kind !== Kind.RootSync || group !== "" || kind !== "Namespace" || declared.sourcePath === "") return false;
  return heldImplicitlyByRootSync(annotations);
}

/**
 * The live marks of an implicit Namespace a RootSync manages (driftless's and Config Sync's alike):
 * a RootSync's manager, `deletion: detach`, and no source path, which only objects read from a file get.
 */
function heldImplicitlyByRootSync(annotations: Readonly<Record<string, string>>): boolean {
  const manager = annotations[ManagedAnnotation.Manager];
  return (
    annotations[ManagedAnnotation.Managed] === ManagedValue.Enabled &&
    manager !== undefined &&
    isRootManager(manager) &&
    annotations[UserAnnotation.LifecycleDeletion] === LifecycleDeletionValue.Detach &&
    (annotations[ManagedAnnotation.SourcePath] ?? "") === ""
  );
}

function managerConflict(sync: SyncIdentity, annotations: Readonly<Record<string, string>>): string | undefined {
  if (annotations[ManagedAnnotation.Managed] !== ManagedValue.Enabled) return undefined;
  const current = annotations[ManagedAnnotation.Manager];
  if (current === undefined || current === "") return undefined;
  if (current === managerAnnotationValue(sync.kind, sync.namespace, sync.name)) return undefined;
  if (sync.kind === "RootSync" && !isRootManager(current)) return undefined;
  return current;
}

/**
 * Another inventory's hold on the object, named as a manager, as Config Sync's inventory policies: a
 * RepoSync adopts only an object no other inventory owns (AdoptIfNoInventory, another tool's too); a
 * RootSync adopts any (AdoptAll) but, as with manager values above, not another RootSync's.
 */
function inventoryConflict(sync: SyncIdentity, annotations: Readonly<Record<string, string>>): string | undefined {
  const owner = annotations[ManagedAnnotation.OwningInventory];
  if (owner === undefined || owner === "" || owner === inventoryId(sync.namespace, sync.name)) return undefined;
  const other = inventorySync(owner);
  // RepoSyncs never live in the RootSyncs' namespace: an inventory there is another RootSync's.
  if (sync.kind === "RootSync" && other?.namespace !== sync.namespace) return undefined;
  return other === undefined ? owner : managerNaming(sync, other);
}

/** The sync an owning-inventory value (`<namespace>_<name>`) names; undefined for another tool's id. */
function inventorySync(owner: string): { readonly namespace: string; readonly name: string } | undefined {
  // Neither a namespace nor a sync name holds "_": the first one separates them.
  const separator = owner.indexOf("_");
  if (separator <= 0 || separator === owner.length - 1) return undefined;
  return { namespace: owner.slice(0, separator), name: owner.slice(separator + 1) };
}

/**
 * The manager value of the sync owning an inventory, spelled `<scope>_<name>` where the bare scope
 * would read as `sync` itself (`root-sync` against `repo-sync`), so KNV1060 names two reconcilers.
 */
function managerNaming(sync: SyncIdentity, other: { readonly namespace: string; readonly name: string }): string {
  const rootNamespace = sync.kind === Kind.RootSync ? sync.namespace : RootSyncNamespace;
  const kind = other.namespace === rootNamespace ? Kind.RootSync : Kind.RepoSync;
  const value = managerAnnotationValue(kind, other.namespace, other.name);
  if (value !== managerAnnotationValue(sync.kind, sync.namespace, sync.name)) return value;
  return `${kind === Kind.RootSync ? RootManagerScope : other.namespace}_${other.name}`;
}
