/**
 * Config Sync's rule: a sync's source may not declare the sync itself (KNV1069). It would rewrite its own
 * spec (repo, roleRefs) from Git, and its deletion from Git would delete the sync that deletes it. "Itself"
 * is by reconciler name, as Config Sync compares: a RootSync or RepoSync whose reconciler is this one.
 * Stricter than Config Sync, its inventory ResourceGroups count as itself too: declared, their spec would
 * stand in for the inventory, and removed from Git, prune would delete the inventory (it carries the sync's
 * owning-inventory annotation once applied).
 */
import {
  DriftlessError,
  ErrorClass,
  InventoryOverflowSuffix,
  KnvCode,
  KptGroup,
  reconcilerName,
  Kind,
} from "@driftless/api";
import type { SyncIdentity } from "@driftless/applier";
import type { DeclaredObject } from "@driftless/source";

export class SelfReconcileError extends DriftlessError {
  constructor(object: DeclaredObject) {
    const namespace = object.metadata.namespace ?? "";
    super({
      code: KnvCode.SelfReconcile,
      errorClass: ErrorClass.Terminal,
      message: `${object.kind} ${namespace}/${object.metadata.name} must not manage itself in its repo: it is ${object.kind === "ResourceGroup" ? "the inventory of this source's sync" : "the sync of this source"} (remove it from the source, or manage it from another sync)`,
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
  const inventories = new Set([identity.name, `${identity.name}${InventoryOverflowSuffix}`]);
  return objects
    .filter((o) =>
      o.group === KptGroup && o.kind === "ResourceGroup"
        ? (o.metadata.namespace ?? "") === identity.namespace && inventories.has(o.metadata.name)
        : o.group === "configsync.gke.io" &&
          (o.kind === Kind.RootSync || o.kind === Kind.RepoSync) &&
          reconcilerName(o.kind, o.metadata.namespace ?? "", o.metadata.name) === own,
    )
    .map((o) => new SelfReconcileError(o));
}
