import {
  DriftlessError,
  ErrorClass,
  KnvCode,
  ManagedAnnotation,
  ManagedValue,
  RootManagerScope,
  managerAnnotationValue,
} from "@driftless/api";
import { declaredResource, type DesiredObject, type SyncIdentity } from "./desired.ts";
import { describeId } from "./object-id.ts";

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
      // Config Sync's KNV1060 sentence, word for word (users match on it); the object follows, as its body does.
      message:
        `The "${desiredManager}" reconciler detected a management conflict with the "${currentManager}" reconciler. ` +
        "Remove the object from one of the sources of truth so that the object is only managed by one reconciler." +
        `\n\n${describeId(desired.id)}`,
      resources: [declaredResource(desired)],
    });
    this.currentManager = currentManager;
    this.desiredManager = desiredManager;
  }
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
 * the RepoSync reporting the conflict, instead of the two rewriting it in turn.
 */
export function conflictingManager(
  sync: SyncIdentity,
  annotations: Readonly<Record<string, string>>,
): string | undefined {
  if (annotations[ManagedAnnotation.Managed] !== ManagedValue.Enabled) return undefined;
  const current = annotations[ManagedAnnotation.Manager];
  if (current === undefined || current === "") return undefined;
  if (current === managerAnnotationValue(sync.kind, sync.namespace, sync.name)) return undefined;
  if (sync.kind === "RootSync" && !isRootManager(current)) return undefined;
  return current;
}
