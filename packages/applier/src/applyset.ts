/**
 * The sync as an ApplySet (KEP-3659), as Config Sync makes it: the RootSync or RepoSync is the
 * parent (label `applyset.kubernetes.io/id`, annotation `applyset.kubernetes.io/tooling:
 * configsync.gke.io/v1`) and every managed object carries `applyset.kubernetes.io/part-of` with the
 * same id. Config Sync writes no `contains-group-kinds` on the parent, and neither does driftless.
 */
import { hash } from "node:crypto";
import {
  ApplySetAnnotation,
  ApplySetLabel,
  ApplySetToolingName,
  ApplySetToolingValue,
  ConfigSyncGroup,
} from "@driftless/api";
import type { KubeClient, KubeObject, ResourceMapping } from "@driftless/kube";
import type { SyncIdentity } from "./desired.ts";

const ids = new Map<string, string>();

/**
 * The set's id: `applyset-<base64url(sha256("<name>.<namespace>.<Kind>.<group>"))>-v1`, the
 * KEP's v1 format (kubectl's ApplySet.ID), over the parent RSync.
 */
export function applySetId(sync: SyncIdentity): string {
  const unencoded = [sync.name, sync.namespace, sync.kind, ConfigSyncGroup].join(".");
  let id = ids.get(unencoded);
  if (id === undefined) {
    id = `applyset-${hash("sha256", unencoded, "base64url")}-v1`;
    ids.set(unencoded, id);
  }
  return id;
}

/** The tooling named by an annotation value `<name>/<version>`; undefined when it has no `/`. */
function toolingName(value: string): string | undefined {
  const slash = value.lastIndexOf("/");
  return slash <= 0 ? undefined : value.slice(0, slash);
}

/** The parent's metadata is owned by another tool: the set is left alone, as the KEP requires. */
export class ApplySetToolingConflictError extends Error {
  constructor(sync: SyncIdentity, tooling: string) {
    super(
      `${sync.kind} ${sync.namespace}/${sync.name} is the parent of an ApplySet managed by ${tooling}; remove its ${ApplySetAnnotation.Tooling} annotation to let driftless adopt it`,
    );
  }
}

/**
 * The merge patch that makes `raw` (the RSync) this sync's ApplySet parent; undefined when it is
 * one already. Throws ApplySetToolingConflictError when another tool's tooling annotation is there.
 */
export function applySetParentPatch(sync: SyncIdentity, raw: KubeObject): object | undefined {
  const id = applySetId(sync);
  const labels = raw.metadata.labels ?? {};
  const tooling = raw.metadata.annotations?.[ApplySetAnnotation.Tooling];
  if (labels[ApplySetLabel.Id] === id && tooling === ApplySetToolingValue) return undefined;
  if (tooling !== undefined && tooling !== ApplySetToolingValue && toolingName(tooling) !== ApplySetToolingName)
    throw new ApplySetToolingConflictError(sync, tooling);
  return {
    metadata: {
      labels: { [ApplySetLabel.Id]: id },
      annotations: { [ApplySetAnnotation.Tooling]: ApplySetToolingValue },
    },
  };
}

/**
 * Labels and annotates the RSync as its ApplySet's parent (a merge patch of those two keys only,
 * as Config Sync's reconciler-manager does); nothing is sent when `known`, a copy just read, already is.
 */
export async function alignApplySetParent(
  client: KubeClient,
  rsync: ResourceMapping,
  sync: SyncIdentity,
  known: KubeObject,
): Promise<void> {
  const patch = applySetParentPatch(sync, known);
  if (patch !== undefined) await client.patch(rsync, sync.namespace, sync.name, patch, "merge");
}
