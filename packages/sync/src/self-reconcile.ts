/**
 * Config Sync's rule: a sync's source may not declare the sync itself (KNV1069). It would rewrite its own
 * spec (repo, roleRefs) from Git, and its deletion from Git would delete the sync that deletes it. "Itself"
 * is by reconciler name, as Config Sync compares: a RootSync or RepoSync whose reconciler is this one.
 */
import { DriftlessError, ErrorClass, KnvCode, reconcilerName, Kind } from "@driftless/api";
import type { SyncIdentity } from "@driftless/applier";
import type { DeclaredObject } from "@driftless/source";

export class SelfReconcileError extends DriftlessError {
  constructor(object: DeclaredObject) {
    const namespace = object.metadata.namespace ?? "";
    super({
      code: KnvCode.SelfReconcile,
      errorClass: ErrorClass.Terminal,
      message: `${object.kind} ${namespace}/${object.metadata.name} must not manage itself in its repo: it is the sync of this source (remove it from the source, or manage it from another sync)`,
      resources: [
        {
          group: object.group,
          version: object.version,
          kind: object.kind,
          namespace,
          name: object.metadata.name,
          sourcePath: object.sourcePath,
        },
      ],
    });
  }
}

export function selfReconcileErrors(identity: SyncIdentity, objects: readonly DeclaredObject[]): SelfReconcileError[] {
  const own = reconcilerName(identity.kind, identity.namespace, identity.name);
  return objects
    .filter(
      (o) =>
        o.group === "configsync.gke.io" &&
        (o.kind === Kind.RootSync || o.kind === Kind.RepoSync) &&
        reconcilerName(o.kind, o.metadata.namespace ?? "", o.metadata.name) === own,
    )
    .map((o) => new SelfReconcileError(o));
}
