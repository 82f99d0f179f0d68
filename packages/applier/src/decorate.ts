import {
  ApplySetLabel,
  LifecycleDeletionValue,
  LifecycleMutationValue,
  ManagedAnnotation,
  ManagedByValue,
  ManagedLabel,
  ManagedValue,
  ManagementAnnotationKeys,
  inventoryId,
  managerAnnotationValue,
  resourceId,
  UserAnnotation,
} from "@driftless/api";
import { Annotator } from "@driftless/objectmatcher";
import { applySetId } from "./applyset.ts";
import { sourcePathFromRoot } from "./declaring-source.ts";
import type { DesiredObject, JsonObject, SyncIdentity } from "./desired.ts";

type Meta = { labels?: Record<string, string>; annotations?: Record<string, string>; [key: string]: unknown };

function metaOf(object: JsonObject): Meta {
  return (object["metadata"] ?? {}) as Meta;
}

/**
 * The declared object plus the management metadata Config Sync writes (architecture.md): labels
 * managed-by, ApplySet part-of and declared-version; annotations managed, manager, resource-id,
 * owning-inventory, source-path (from the repository root), git-context (when the source is
 * known) and cluster-name (when the cluster has one). Equal metadata is what lets a switch from Config Sync adopt its objects without a write.
 * `token` (the commit) is added by the caller only when the object is written, so that a new
 * commit does not rewrite every unchanged object.
 */
export function decorate(desired: DesiredObject, sync: SyncIdentity): JsonObject {
  // Only metadata changes: the rest is shared with the declaration, never modified (the matcher and
  // the client only read it), which spares a deep copy of every object on every pass.
  const object = { ...desired.object };
  const meta = { ...metaOf(object) };
  object["metadata"] = meta;
  dropServerOwned(object, meta);
  // An object no file declares (an implicit Namespace) has neither a source path nor a declared
  // version: Config Sync adds those while reading files, and its implicit Namespaces come after.
  const fromFile = desired.sourcePath !== "";
  meta.labels = {
    ...meta.labels,
    [ManagedLabel.ManagedBy]: ManagedByValue,
    [ApplySetLabel.PartOf]: applySetId(sync),
    ...(fromFile ? { [ManagedLabel.DeclaredVersion]: declaredVersion(desired.apiVersion) } : {}),
  };
  const source = desired.source;
  meta.annotations = {
    ...meta.annotations,
    [ManagedAnnotation.Managed]: ManagedValue.Enabled,
    [ManagedAnnotation.Manager]: managerAnnotationValue(sync.kind, sync.namespace, sync.name),
    [ManagedAnnotation.ResourceId]: resourceId(desired.id),
    [ManagedAnnotation.OwningInventory]: inventoryId(sync.namespace, sync.name),
    ...(fromFile
      ? {
          [ManagedAnnotation.SourcePath]:
            source === undefined ? desired.sourcePath : sourcePathFromRoot(source, desired),
        }
      : {}),
    ...(source === undefined ? {} : { [ManagedAnnotation.GitContext]: source.gitContext }),
    // Config Sync's hydrator names the cluster on every object read from a file, once it has a name.
    ...(fromFile && source?.clusterName ? { [ManagedAnnotation.ClusterName]: source.clusterName } : {}),
  };
  return object;
}

/**
 * What Config Sync's applier drops from a declaration before it writes (AsUnstructuredSanitized): the
 * parser lets only empty ones through (`status: {}`, `creationTimestamp: null`, as `kubectl create
 * --dry-run -o yaml` writes them), and sent, a status fails every kind without one (a ConfigMap's
 * `strict decoding error: unknown field "status"`).
 */
function dropServerOwned(object: JsonObject, meta: Meta): void {
  delete object["status"];
  delete meta["creationTimestamp"];
  delete meta["managedFields"];
}

/** The version part of an apiVersion (`v1` of `apps/v1`), Config Sync's declared-version label. */
function declaredVersion(apiVersion: string): string {
  return apiVersion.slice(apiVersion.lastIndexOf("/") + 1);
}

/**
 * What a live object is compared against: the decorated declaration carrying the commit token the
 * live object already has (or `fallbackCommit` when it has none), so that a new commit alone is
 * never a change. Used by the applier, the remediator and `driftless diff` alike.
 */
export function comparisonCandidate(
  decorated: JsonObject,
  liveAnnotations: Readonly<Record<string, string>>,
  fallbackCommit?: string,
): JsonObject {
  const token = liveAnnotations[ManagedAnnotation.Token] ?? fallbackCommit;
  return token === undefined ? withOwnMetadata(decorated) : withToken(decorated, token);
}

/** A copy of `object` carrying the commit token, with metadata and annotations of its own (one copy of each). */
export function withToken(object: JsonObject, commit: string): JsonObject {
  const meta = metaOf(object);
  return { ...object, metadata: { ...meta, annotations: { ...meta.annotations, [ManagedAnnotation.Token]: commit } } };
}

/**
 * A copy of `object` whose metadata (and its annotations) can be changed without touching the
 * original; everything else is shared, as decorate() shares it.
 */
export function withOwnMetadata(object: JsonObject): JsonObject {
  const meta = metaOf(object);
  return { ...object, metadata: { ...meta, annotations: { ...meta.annotations } } };
}

export function setToken(object: JsonObject, commit: string): void {
  const meta = metaOf(object);
  meta.annotations = { ...meta.annotations, [ManagedAnnotation.Token]: commit };
  object["metadata"] = meta;
}

export function annotationsOf(object: JsonObject): Readonly<Record<string, string>> {
  return metaOf(object).annotations ?? {};
}

/** What Config Sync writes on a hierarchy's Namespaces (with its own value), and counts as its metadata. */
const HncManagedByAnnotation = "hnc.x-k8s.io/managed-by";

/** Config Sync's own metadata keys, as its `isConfigSyncAnnotation`: its prefixes, the mutation annotation, the inventory. */
function isConfigSyncAnnotation(key: string, value: string): boolean {
  return (
    hasConfigSyncPrefix(key) ||
    key.startsWith(UserAnnotation.LifecycleMutation) ||
    key === ManagedAnnotation.OwningInventory ||
    (key === HncManagedByAnnotation && value === ManagedByValue)
  );
}

function isConfigSyncLabel(key: string, value: string): boolean {
  return (
    hasConfigSyncPrefix(key) ||
    (key === ManagedLabel.ManagedBy && value === ManagedByValue) ||
    key === ApplySetLabel.PartOf
  );
}

function hasConfigSyncPrefix(key: string): boolean {
  return key.startsWith("configmanagement.gke.io/") || key.startsWith("configsync.gke.io/");
}

/**
 * `live` carrying the declaration's Config Sync metadata (labels and annotations, the mutation annotation
 * among them), or undefined when it carries it already: all Config Sync writes on an object that ignores
 * mutations, whose content stays as it is (its `UpdateConfigSyncMetadata`). The commit token is not
 * compared, as elsewhere a new commit alone is no change; a write carries `commit`.
 */
export function withDeclaredMetadata(live: JsonObject, decorated: JsonObject, commit: string): JsonObject | undefined {
  const declared = metaOf(decorated);
  const current = metaOf(live);
  const annotations = Object.entries(declared.annotations ?? {}).filter(
    ([key, value]) => key !== ManagedAnnotation.Token && isConfigSyncAnnotation(key, value),
  );
  const labels = Object.entries(declared.labels ?? {}).filter(([key, value]) => isConfigSyncLabel(key, value));
  const differs = (have: Record<string, string> | undefined, want: [string, string][]): boolean =>
    want.some(([key, value]) => have?.[key] !== value);
  if (!differs(current.annotations, annotations) && !differs(current.labels, labels)) return undefined;
  return {
    ...live,
    metadata: {
      ...current,
      labels: { ...current.labels, ...Object.fromEntries(labels) },
      annotations: { ...current.annotations, ...Object.fromEntries(annotations), [ManagedAnnotation.Token]: commit },
    },
  };
}

/** True when `object` carries `client.lifecycle.config.k8s.io/mutation: ignore`. */
export function mutationIgnored(object: JsonObject): boolean {
  return annotationsOf(object)[UserAnnotation.LifecycleMutation] === LifecycleMutationValue.Ignore;
}

/**
 * A live object carrying the mutation annotation its declaration does not: Config Sync counts it as its
 * own metadata and removes it, so an object someone marked by hand is corrected again.
 */
export function strayMutationAnnotation(live: JsonObject, decorated: JsonObject): boolean {
  return (
    Object.hasOwn(annotationsOf(live), UserAnnotation.LifecycleMutation) &&
    !Object.hasOwn(annotationsOf(decorated), UserAnnotation.LifecycleMutation)
  );
}

/** True when the declaration opts the object out of management (`configmanagement.gke.io/managed: disabled`). */
export function isManagementDisabled(object: JsonObject): boolean {
  return annotationsOf(object)[ManagedAnnotation.Managed] === ManagedValue.Disabled;
}

/**
 * The live object without driftless's metadata (Orphan deletion, detach, `managed: disabled`):
 * it stays on the cluster and no sync claims it any more. Returns undefined when nothing is ours.
 * The last-applied record goes too, but for the `deletion: detach` driftless applied (detachRecord).
 */
export function stripManagement(live: JsonObject, lastAppliedAnnotation: string): JsonObject | undefined {
  const object = structuredClone(live);
  const meta = metaOf(object);
  let changed = false;
  const annotations = { ...meta.annotations };
  const keptRecord = detachRecord(live, lastAppliedAnnotation);
  // Config Sync's RemoveConfigSyncMetadata: every annotation of its own but the mutation annotation,
  // hnc.x-k8s.io/managed-by on a hierarchy's Namespace too.
  for (const [key, value] of Object.entries(annotations)) {
    if (key === lastAppliedAnnotation && value === keptRecord) continue;
    const ours =
      ManagementAnnotationKeys.includes(key) ||
      key === lastAppliedAnnotation ||
      (isConfigSyncAnnotation(key, value) && !key.startsWith(UserAnnotation.LifecycleMutation));
    if (ours) {
      delete annotations[key];
      changed = true;
    }
  }
  if (keptRecord !== undefined && annotations[lastAppliedAnnotation] !== keptRecord) {
    annotations[lastAppliedAnnotation] = keptRecord;
    changed = true;
  }
  const labels = { ...meta.labels };
  for (const key of Object.keys(labels)) {
    if (hasConfigSyncPrefix(key)) {
      delete labels[key];
      changed = true;
    }
  }
  if (labels[ManagedLabel.ManagedBy] === ManagedByValue) {
    delete labels[ManagedLabel.ManagedBy];
    // A managed object's ApplySet is its sync's: it leaves the set with the sync's management.
    delete labels[ApplySetLabel.PartOf];
    changed = true;
  }
  if (!changed) return undefined;
  meta.annotations = annotations;
  meta.labels = labels;
  return object;
}

/**
 * The record a released object keeps when driftless applied its `deletion: detach` (its record holds it, and
 * the live object still does): that annotation alone. Config Sync's field manager keeps owning the annotation
 * after a release (a merge patch leaves managedFields), so a later declaration without it removes it; with no
 * record, the three-way match would keep it as someone else's and the Namespace could never be pruned.
 * A detach added by hand is in no record and stays. Undefined when there is nothing to keep.
 */
function detachRecord(live: JsonObject, recordKey: string): string | undefined {
  if (annotationsOf(live)[UserAnnotation.LifecycleDeletion] !== LifecycleDeletionValue.Detach) return undefined;
  const annotator = new Annotator(recordKey);
  const read = annotator.readOriginal(live);
  const applied = read.record === undefined ? undefined : annotationsOf(read.record)[UserAnnotation.LifecycleDeletion];
  if (applied !== LifecycleDeletionValue.Detach) return undefined;
  const { name, namespace } = metaOf(live);
  return annotator.encodeRecord({
    apiVersion: live["apiVersion"],
    kind: live["kind"],
    metadata: {
      name,
      ...(namespace === undefined ? {} : { namespace }),
      annotations: { [UserAnnotation.LifecycleDeletion]: LifecycleDeletionValue.Detach },
    },
  });
}
