/**
 * The admission decision, as Config Sync's admission webhook makes it: a reconciler may write what
 * its sync manages (and, being a RootSync's, take over what a RepoSync manages, never delete it);
 * anyone else may not create or delete a managed object, change its Config Sync metadata, or change
 * a declared field. Messages are Config Sync's. Anything the webhook cannot read is allowed: the
 * webhook protects, it must never be the reason the cluster cannot be written.
 */
import {
  ConfigSyncOnlyAnnotation,
  ManagedAnnotation,
  ManagedByValue,
  ManagedLabel,
  ManagedValue,
  parseManagerAnnotation,
  reconcilerName,
  resourceId,
  RootReconcilerPrefix,
  RootSyncNamespace,
  UserAnnotation,
} from "@driftless/api";
import { Annotator, LAST_APPLIED_ANNOTATION } from "@driftless/objectmatcher";
import { changedDeclaredFields, changedFieldSet, type FieldSet } from "./admission-fields.ts";

type JsonMap = { [key: string]: JsonValue };
type JsonValue = null | boolean | number | string | JsonValue[] | JsonMap;

/** The part of an `admission.k8s.io/v1` AdmissionRequest the decision reads. */
export interface AdmissionRequest {
  readonly uid: string;
  readonly kind?: { readonly group?: string; readonly version?: string; readonly kind?: string };
  readonly subResource?: string;
  readonly namespace?: string;
  readonly operation?: string;
  readonly userInfo?: { readonly username?: string; readonly groups?: readonly string[] };
  readonly object?: JsonMap | null;
  readonly oldObject?: JsonMap | null;
}

export type AdmissionDecision =
  | { readonly allowed: true }
  /** Always `Forbidden` on the wire, as Config Sync's webhook answers (controller-runtime's Denied). */
  | { readonly allowed: false; readonly reason: "Forbidden"; readonly message: string };

const annotator = new Annotator();
const allow: AdmissionDecision = { allowed: true };

/** The manager's own ServiceAccount: it adds and removes finalizers on syncs, which a RootSync may manage. */
export const ReconcilerManagerServiceAccount = "reconciler-manager";

const serviceAccountsGroup = "system:serviceaccounts";
const systemNamespaceGroup = `${serviceAccountsGroup}:${RootSyncNamespace}`;
const systemNamespaceUserPrefix = `system:serviceaccount:${RootSyncNamespace}:`;

/**
 * kube-controller-manager's deleters (with and without per-controller credentials): a namespace being
 * deleted, or an owner deleted with its dependents, must not hang on a managed object inside. Config
 * Sync refuses them too; driftless lets them through, so that protection never wedges a deletion, unless
 * the object has an owner Git does not declare (`ownedOutsideDeclaration`).
 */
const clusterDeleters = new Set([
  "system:serviceaccount:kube-system:namespace-controller",
  "system:serviceaccount:kube-system:generic-garbage-collector",
  "system:kube-controller-manager",
]);

/**
 * Whether the object has an owner its declaration does not name. Adding an ownerReference touches no
 * declared field, so a user may add one; the garbage collector's delete that follows once that owner is
 * gone is then refused like the user's own (a namespace being deleted is let through by its recheck).
 */
function ownedOutsideDeclaration(obj: JsonMap): boolean {
  const live = ownerUids(metadataOf(obj)["ownerReferences"]);
  if (live.length === 0) return false;
  const record = declaration(obj);
  // Nothing is known to be declared (no readable record): as for fields, the webhook does not guess.
  if (record === undefined) return false;
  const declared = new Set(ownerUids(metadataOf(record)["ownerReferences"]));
  return live.some((uid) => !declared.has(uid));
}

function ownerUids(references: JsonValue | undefined): string[] {
  if (!Array.isArray(references)) return [];
  return references.flatMap((ref) => {
    const uid = typeof ref === "object" && ref !== null && !Array.isArray(ref) ? ref["uid"] : undefined;
    return typeof uid === "string" ? [uid] : [];
  });
}

/** What the decision may look up on the cluster. */
export interface AdmissionLookups {
  /** Whether the namespace is being deleted; false when that cannot be told. */
  readonly namespaceTerminating: (namespace: string) => Promise<boolean>;
}

/**
 * reviewAdmission, and a refused deletion let through when its namespace is being deleted: the namespace
 * controller empties it under whatever identity kube-controller-manager runs as.
 */
export async function reviewAdmissionInCluster(
  request: AdmissionRequest,
  lookups: AdmissionLookups,
): Promise<AdmissionDecision> {
  const decision = reviewAdmission(request);
  return settleInCluster(decision, namespaceToRecheck(request, decision), lookups);
}

/** The namespace whose deletion would lift `decision` (a refused deletion), else undefined. */
export function namespaceToRecheck(request: AdmissionRequest, decision: AdmissionDecision): string | undefined {
  if (decision.allowed || request.operation !== "DELETE") return undefined;
  const namespace = request.namespace ?? "";
  return namespace === "" ? undefined : namespace;
}

/** The decision once the cluster is asked; needs no request, so a large review can be freed meanwhile. */
export async function settleInCluster(
  decision: AdmissionDecision,
  recheck: string | undefined,
  lookups: AdmissionLookups,
): Promise<AdmissionDecision> {
  if (recheck !== undefined && (await lookups.namespaceTerminating(recheck))) return allow;
  return decision;
}

export function reviewAdmission(request: AdmissionRequest): AdmissionDecision {
  // Subresources (status, scale) are not intercepted: the request carries no full parent to judge.
  if (request.subResource !== undefined && request.subResource !== "") return allow;
  const oldObj = request.oldObject ?? undefined;
  const newObj = request.object ?? undefined;
  const subject = oldObj ?? newObj;
  if (subject === undefined) return allow;
  const username = request.userInfo?.username ?? "";
  const operation = request.operation ?? "";
  const group = request.kind?.group ?? groupOf(subject);

  const reconciler = systemServiceAccount(request.userInfo);
  if (reconciler !== undefined) {
    const manager = annotation(oldObj, ManagedAnnotation.Manager) ?? annotation(newObj, ManagedAnnotation.Manager);
    const refusal = refuseReconciler(reconciler, manager ?? "", idOf(subject, group), operation);
    return refusal === undefined ? allow : forbidden(refusal);
  }

  switch (operation) {
    case "CREATE":
      if (newObj !== undefined && isManaged(newObj, group))
        return forbidden(`${username} is not authorized to create managed resource "${gknn(newObj, group)}"`);
      return allow;
    case "DELETE":
      if (oldObj === undefined || metadataOf(oldObj)["deletionTimestamp"] != null) return allow;
      if (clusterDeleters.has(username) && !ownedOutsideDeclaration(oldObj)) return allow;
      if (isManaged(oldObj, group))
        return forbidden(`${username} is not authorized to delete managed resource "${gknn(oldObj, group)}"`);
      return allow;
    case "UPDATE":
      if (oldObj === undefined || newObj === undefined) return allow;
      return reviewUpdate(oldObj, newObj, username, group);
    default:
      return allow;
  }
}

function reviewUpdate(oldObj: JsonMap, newObj: JsonMap, username: string, group: string): AdmissionDecision {
  if (!isManaged(oldObj, group) && !isManaged(newObj, group)) return allow;
  // Once deletion has begun, whoever holds a finalizer must be able to remove it, declared or not: else the
  // object, and a namespace being deleted around it, never goes. Any other change is judged as before.
  if (metadataOf(oldObj)["deletionTimestamp"] != null && onlyFinalizersRemoved(oldObj, newObj))
    return reviewUpdate(withoutFinalizers(oldObj), withoutFinalizers(newObj), username, group);
  const metadataChanges = changedConfigSyncMetadata(oldObj, newObj);
  if (metadataChanges.length > 0)
    return forbidden(
      `${username} cannot modify Config Sync metadata of object "${gknn(oldObj, group)}": ${metadataChanges.join("\n")}`,
    );
  if (annotation(oldObj, UserAnnotation.LifecycleMutation) === "ignore") return allow;
  const changed = declaredChanges(oldObj, newObj);
  if (changed === undefined) return allow;
  if (changed.length > 0)
    return forbidden(
      `${username} cannot modify fields of object "${gknn(oldObj, group)}" managed by Config Sync: ${changed.join("\n")}`,
    );
  return allow;
}

function finalizersOf(obj: JsonMap): unknown[] {
  const finalizers = metadataOf(obj)["finalizers"];
  return Array.isArray(finalizers) ? finalizers : [];
}

/** Every finalizer of `newObj` was on `oldObj`, and at least one went. */
function onlyFinalizersRemoved(oldObj: JsonMap, newObj: JsonMap): boolean {
  const before = finalizersOf(oldObj);
  const after = finalizersOf(newObj);
  return after.length < before.length && after.every((f) => before.includes(f));
}

function withoutFinalizers(obj: JsonMap): JsonMap {
  const { finalizers: _finalizers, ...metadata } = metadataOf(obj);
  return { ...obj, metadata };
}

/**
 * Config Sync's precedence between reconcilers (and the manager, for finalizers on syncs): undefined
 * when `reconciler` may `operation` an object whose manager annotation is `manager`.
 */
export function refuseReconciler(
  reconciler: string,
  manager: string,
  id: { readonly group: string; readonly kind: string; readonly namespace: string; readonly name: string },
  operation: string,
): string | undefined {
  const owner = parseManagerAnnotation(manager);
  if (owner === undefined) return undefined;
  const ownerReconciler = reconcilerName(owner.kind, owner.namespace, owner.name);
  const refusal = `config sync "${reconciler}" can not ${operation} object "${idString(id)}" managed by config sync "${ownerReconciler}"`;
  if (id.group === "configsync.gke.io" && (id.kind === "RootSync" || id.kind === "RepoSync")) {
    // The manager and a sync's own reconciler update a sync (finalizers) whoever manages it.
    if (reconciler === ReconcilerManagerServiceAccount && operation === "UPDATE") return undefined;
    if (reconciler === reconcilerName(id.kind, id.namespace, id.name))
      return operation === "UPDATE" ? undefined : refusal;
  }
  // A RootSync's reconciler may take over what a RepoSync manages, but not delete it.
  if (isRootReconciler(reconciler) && owner.kind !== "RootSync" && operation !== "DELETE") return undefined;
  return reconciler === ownerReconciler ? undefined : refusal;
}

function isRootReconciler(name: string): boolean {
  return name === RootReconcilerPrefix || name.startsWith(`${RootReconcilerPrefix}-`);
}

/** The name of a ServiceAccount of config-management-system making the request, as Config Sync tells one. */
function systemServiceAccount(userInfo: AdmissionRequest["userInfo"]): string | undefined {
  const username = userInfo?.username ?? "";
  const groups = userInfo?.groups ?? [];
  if (!username.startsWith(systemNamespaceUserPrefix)) return undefined;
  if (!groups.includes(serviceAccountsGroup) || !groups.includes(systemNamespaceGroup)) return undefined;
  return username.slice(systemNamespaceUserPrefix.length);
}

/** Managed: `configmanagement.gke.io/managed: enabled` and a resource id that names this very object (not a copy). */
function isManaged(obj: JsonMap, group: string): boolean {
  return (
    annotation(obj, ManagedAnnotation.Managed) === ManagedValue.Enabled &&
    annotation(obj, ManagedAnnotation.ResourceId) === gknn(obj, group)
  );
}

function changedConfigSyncMetadata(oldObj: JsonMap, newObj: JsonMap): string[] {
  const changed: string[] = [];
  for (const [field, isOurs] of [
    ["annotations", isConfigSyncAnnotationKey],
    ["labels", isConfigSyncLabelKey],
  ] as const) {
    const before = stringMap(metadataOf(oldObj)[field]);
    const after = stringMap(metadataOf(newObj)[field]);
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
      if (isOurs(key) && before[key] !== after[key]) changed.push(`.metadata.${field}.${key}`);
    }
  }
  return changed.sort();
}

function hasConfigSyncPrefix(key: string): boolean {
  return key.startsWith("configmanagement.gke.io/") || key.startsWith("configsync.gke.io/");
}

function isConfigSyncAnnotationKey(key: string): boolean {
  return (
    hasConfigSyncPrefix(key) ||
    key.startsWith(UserAnnotation.LifecycleMutation) ||
    key === ManagedAnnotation.OwningInventory ||
    // driftless's record of the declaration is what this webhook reads the declared fields from.
    key === LAST_APPLIED_ANNOTATION
  );
}

function isConfigSyncLabelKey(key: string): boolean {
  return hasConfigSyncPrefix(key) || key === ManagedLabel.ManagedBy;
}

/**
 * The declared fields the update changes: from driftless's record of the declaration, else from Config
 * Sync's declared-fields (an object adopted from Config Sync and not rewritten since). Undefined when
 * the object has neither, readable: nothing is known to be declared.
 */
function declaredChanges(oldObj: JsonMap, newObj: JsonMap): string[] | undefined {
  const record = declaration(oldObj);
  if (record !== undefined) return changedDeclaredFields(record, oldObj, newObj);
  const fields = annotation(oldObj, ConfigSyncOnlyAnnotation.DeclaredFields);
  if (fields === undefined) return undefined;
  try {
    const parsed = JSON.parse(fields) as unknown;
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined;
    return changedFieldSet(parsed as FieldSet, oldObj, newObj);
  } catch {
    return undefined;
  }
}

/** The declaration driftless recorded on the object, or undefined when there is none it can read. */
function declaration(obj: JsonMap): JsonMap | undefined {
  try {
    return annotator.getOriginalConfiguration(obj) as JsonMap | undefined;
  } catch {
    return undefined;
  }
}

function metadataOf(obj: JsonMap): JsonMap {
  const metadata = obj["metadata"];
  return typeof metadata === "object" && metadata !== null && !Array.isArray(metadata) ? metadata : {};
}

function stringMap(value: JsonValue | undefined): Record<string, string> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === "string"));
}

function annotation(obj: JsonMap | undefined, key: string): string | undefined {
  if (obj === undefined) return undefined;
  return stringMap(metadataOf(obj)["annotations"])[key];
}

function groupOf(obj: JsonMap): string {
  const apiVersion = typeof obj["apiVersion"] === "string" ? obj["apiVersion"] : "";
  const slash = apiVersion.indexOf("/");
  return slash === -1 ? "" : apiVersion.slice(0, slash);
}

function idOf(obj: JsonMap, group: string): { group: string; kind: string; namespace: string; name: string } {
  const metadata = metadataOf(obj);
  return {
    group,
    kind: typeof obj["kind"] === "string" ? obj["kind"] : "",
    namespace: typeof metadata["namespace"] === "string" ? metadata["namespace"] : "",
    name: typeof metadata["name"] === "string" ? metadata["name"] : "",
  };
}

/** Config Sync's core.ID string: `Kind.group, namespace/name`. */
function idString(id: ReturnType<typeof idOf>): string {
  return `${id.group === "" ? id.kind : `${id.kind}.${id.group}`}, ${id.namespace}/${id.name}`;
}

/** `configsync.gke.io/resource-id` of the object: `<group>_<kind>_<namespace>_<name>`, kind lowercased. */
function gknn(obj: JsonMap, group: string): string {
  const id = idOf(obj, group);
  return resourceId({
    group,
    kind: id.kind,
    ...(id.namespace === "" ? {} : { namespace: id.namespace }),
    name: id.name,
  });
}

function forbidden(message: string): AdmissionDecision {
  return { allowed: false, reason: "Forbidden", message };
}

/** Label and value the webhook's objectSelector matches: every object driftless manages carries it. */
export const ManagedObjectLabel = { key: ManagedLabel.ManagedBy, value: ManagedByValue } as const;
