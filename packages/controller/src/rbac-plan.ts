/**
 * Who a sync's reconciler is and what it may do, as data: its ServiceAccount, the role bindings
 * that grant it permissions, and the one Role of its own. Names follow Config Sync's
 * reconciler-manager, so operators find the same objects:
 * - RootSync: the shared ClusterRoleBinding `configsync.gke.io:root-reconciler` to cluster-admin;
 *   or, with `spec.override.roleRefs`, the shared `configsync.gke.io:root-reconciler-base` (the
 *   sync's own status and inventory) plus one binding per roleRef, named after the reconciler.
 * - RepoSync: the shared RoleBinding `configsync.gke.io:ns-reconciler` in the sync's namespace
 *   (its RepoSync, inventory and Events); what it may apply, the namespace's admin grants.
 * - Both: a Role `<reconciler>-sync` in the sync's namespace on exactly its own RSync (and status;
 *   the admission policy in manifests/ keeps its spec out of reach) and its own ResourceGroups, by name; and, when the spec names Secrets, a Role
 *   `<reconciler>-secrets` with `get`, and `list` and `watch` by name (secret-watch.ts), on exactly those names; likewise
 *   `<reconciler>-helm-values` on the ConfigMaps of spec.helm.valuesFileRefs. Each has a RoleBinding of its name.
 * Shared bindings list one subject per reconciler; a reconciler's teardown removes its subject.
 */
import { createHash } from "node:crypto";
import {
  ConfigSyncGroup,
  inventoryGroupNames,
  KptGroup,
  Kind,
  Plural,
  reconcilerName,
  RootSyncNamespace,
  type RootSyncRoleRef,
  type RSync,
} from "@driftless/api";
import type { SyncRef } from "@driftless/queue";

export const RbacName = {
  /** Shared ClusterRoleBinding of root reconcilers without roleRefs, to cluster-admin. */
  RootLegacyBinding: "configsync.gke.io:root-reconciler",
  /** Shared ClusterRoleBinding of root reconcilers with roleRefs, to the base ClusterRole. */
  RootBaseBinding: "configsync.gke.io:root-reconciler-base",
  /** ClusterRole with what every root reconciler needs but its own objects (manifests/reconciler-rbac.yaml). */
  RootBaseRole: "configsync.gke.io:root-reconciler",
  /** Shared RoleBinding in a RepoSync's namespace, and the ClusterRole it binds. */
  NsBinding: "configsync.gke.io:ns-reconciler",
  NsRole: "configsync.gke.io:ns-reconciler",
  /** Shared ClusterRoleBinding of RepoSync reconcilers to reading CRDs (their custom resources' schemas). */
  NsCrdReaderBinding: "configsync.gke.io:ns-reconciler-crd-reader",
  NsCrdReaderRole: "configsync.gke.io:ns-reconciler-crd-reader",
  ClusterAdmin: "cluster-admin",
} as const;

export type BindingKind = "RoleBinding" | "ClusterRoleBinding";

export interface Subject {
  readonly kind: "ServiceAccount";
  readonly name: string;
  readonly namespace: string;
}

export interface BindingRef {
  readonly kind: BindingKind;
  readonly name: string;
  /** Set for RoleBindings. */
  readonly namespace?: string;
  readonly roleRef: { readonly kind: "Role" | "ClusterRole"; readonly name: string };
}

export interface PolicyRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  readonly resourceNames?: readonly string[];
}

/** A Role of one sync alone, in the sync's namespace. */
export interface OwnedRole {
  readonly namespace: string;
  readonly name: string;
  readonly rules: readonly PolicyRule[];
}

export interface IdentityPlan {
  readonly serviceAccount: { readonly namespace: string; readonly name: string };
  readonly subject: Subject;
  /** Roles that belong to this sync alone (each bound by the binding of its name in `owned`). */
  readonly roles: readonly OwnedRole[];
  /** Shared bindings that must list the subject. */
  readonly shared: readonly BindingRef[];
  /** Shared bindings that must not list it (the other RootSync variant). */
  readonly notShared: readonly BindingRef[];
  /** Bindings that belong to this sync alone. */
  readonly owned: readonly BindingRef[];
}

function subjectOf(sync: SyncRef): Subject {
  return {
    kind: "ServiceAccount",
    name: reconcilerName(sync.kind, sync.namespace, sync.name),
    namespace: RootSyncNamespace,
  };
}

const rootLegacy: BindingRef = {
  kind: "ClusterRoleBinding",
  name: RbacName.RootLegacyBinding,
  roleRef: { kind: "ClusterRole", name: RbacName.ClusterAdmin },
};
const rootBase: BindingRef = {
  kind: "ClusterRoleBinding",
  name: RbacName.RootBaseBinding,
  roleRef: { kind: "ClusterRole", name: RbacName.RootBaseRole },
};

function nsShared(namespace: string): BindingRef {
  return {
    kind: "RoleBinding",
    name: RbacName.NsBinding,
    namespace,
    roleRef: { kind: "ClusterRole", name: RbacName.NsRole },
  };
}

/**
 * CRDs are cluster-scoped, so a RoleBinding cannot grant them: a RepoSync's reconciler reads its custom
 * resources' schemas from their CRDs, current for every match, as a root reconciler does. Schemas are
 * public to every authenticated user through /openapi/v3 anyway.
 */
const nsCrdReader: BindingRef = {
  kind: "ClusterRoleBinding",
  name: RbacName.NsCrdReaderBinding,
  roleRef: { kind: "ClusterRole", name: RbacName.NsCrdReaderRole },
};

/** The shared bindings a sync's subject may appear in, whatever its spec says (for teardown). */
export function sharedBindingsOf(sync: SyncRef): readonly BindingRef[] {
  return sync.kind === Kind.RootSync ? [rootLegacy, rootBase] : [nsShared(sync.namespace), nsCrdReader];
}

/**
 * `<reconciler>-<hash of the role>`: stable, so re-planning finds the same binding, and prefixed
 * with the reconciler name as Config Sync's are. The hash keeps it short whatever the role's name.
 */
export function ownedBindingName(
  reconciler: string,
  ref: { kind: string; name: string; namespace?: string | undefined },
): string {
  const digest = createHash("sha256")
    .update(`${ref.kind}/${ref.namespace ?? ""}/${ref.name}`)
    .digest("hex")
    .slice(0, 10);
  return `${reconciler}-${digest}`;
}

function ownedBinding(reconciler: string, ref: RootSyncRoleRef, namespace: string | undefined): BindingRef {
  const name = ownedBindingName(reconciler, { ...ref, namespace });
  const roleRef = { kind: ref.kind, name: ref.name };
  return namespace === undefined
    ? { kind: "ClusterRoleBinding", name, roleRef }
    : { kind: "RoleBinding", name, namespace, roleRef };
}

/**
 * The Secrets the reconciler reads (packages/sync/src/credentials.ts, artifact-credentials.ts): `secretRef` (the parser
 * refuses one with auth `none`) and `caCertSecretRef`. Sorted, so an unchanged spec plans an
 * unchanged Role.
 */
export function secretNamesOf(sync: RSync): string[] {
  const { git, oci, helm } = sync.spec;
  const names = [git, oci, helm]
    .flatMap((source) => [source?.secretRef?.name, source?.caCertSecretRef?.name])
    .filter((n): n is string => n !== undefined && n !== "");
  return [...new Set(names)].sort();
}

/** `<reconciler>-secrets`: no roleRef binding name (`<reconciler>-<hex>`) can take this form. */
export function secretRoleName(reconciler: string): string {
  return `${reconciler}-secrets`;
}

/** spec.helm.valuesFileRefs' ConfigMaps, which the reconciler reads itself (artifact-sources.ts). Sorted. */
export function valuesConfigMapNamesOf(sync: RSync): string[] {
  const names = (sync.spec.helm?.valuesFileRefs ?? []).flatMap((ref) => (ref.name ? [ref.name] : []));
  return [...new Set(names)].sort();
}

/** `<reconciler>-helm-values`: no roleRef binding name (hex) or other owned role can take this form. */
export function valuesRoleName(reconciler: string): string {
  return `${reconciler}-helm-values`;
}

/** `<reconciler>-sync`: no roleRef binding name (hex) or other sync's role (another suffix) can take this form. */
export function syncRoleName(reconciler: string): string {
  return `${reconciler}-sync`;
}

function ownedAccess(role: OwnedRole): { roles: OwnedRole[]; bindings: BindingRef[] } {
  const { namespace, name } = role;
  return { roles: [role], bindings: [{ kind: "RoleBinding", name, namespace, roleRef: { kind: "Role", name } }] };
}

/**
 * Its own RSync and ResourceGroups, by name: what the reconciler reads and writes of those kinds
 * (packages/sync: rsync.ts, status.ts, finalizer.ts, own-annotations.ts, sync-request.ts, applyset's
 * parent patch, own-sync-watch.ts; packages/applier: inventory.ts, inventory-overflow.ts). It lists and
 * watches only its own RSync (a list or watch passes resourceNames only with that name's field selector)
 * and deletes none; what it may change on its own is manifests/reconciler-admission-policy.yaml's to say. `create` cannot be limited to a
 * name (the authorizer sees none), so RBAC leaves it open in the sync's namespace and the admission policy
 * reconciler-resourcegroup-creates.driftless.dev refuses a reconciler (a RepoSync's, or a RootSync's in
 * config-management-system) any group but its own two.
 */
function syncAccess(ref: SyncRef, reconciler: string): { roles: OwnedRole[]; bindings: BindingRef[] } {
  const plural = ref.kind === Kind.RootSync ? Plural.RootSync : Plural.RepoSync;
  return ownedAccess({
    namespace: ref.namespace,
    name: syncRoleName(reconciler),
    rules: [
      // The main resource for its finalizer and annotations only: the admission policy
      // reconciler-sync-writes.driftless.dev refuses any other change (RBAC cannot name fields).
      {
        apiGroups: [ConfigSyncGroup],
        resources: [plural],
        verbs: ["get", "list", "watch", "update", "patch"],
        resourceNames: [ref.name],
      },
      {
        apiGroups: [ConfigSyncGroup],
        resources: [`${plural}/status`],
        verbs: ["update", "patch"],
        resourceNames: [ref.name],
      },
      {
        apiGroups: [KptGroup],
        resources: [Plural.ResourceGroup, `${Plural.ResourceGroup}/status`],
        verbs: ["get", "update", "patch", "delete"],
        resourceNames: [...inventoryGroupNames(ref.name)],
      },
      { apiGroups: [KptGroup], resources: [Plural.ResourceGroup], verbs: ["create"] },
    ],
  });
}

function secretAccess(sync: RSync, reconciler: string): { roles: OwnedRole[]; bindings: BindingRef[] } {
  const secretNames = secretNamesOf(sync);
  if (secretNames.length === 0) return { roles: [], bindings: [] };
  return ownedAccess({
    namespace: sync.metadata.namespace ?? "",
    name: secretRoleName(reconciler),
    rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get", "list", "watch"], resourceNames: secretNames }],
  });
}

/**
 * `get`, `list` and `watch` on exactly the ConfigMaps spec.helm.valuesFileRefs names, in the sync's namespace:
 * a RootSync restricted by roleRefs (or a RepoSync whose namespace grant lacks ConfigMaps) reads them too, and
 * watches each by name (a list or watch passes resourceNames only with that name's field selector). Config
 * Sync's manager mounts them into helm-sync instead; driftless's reconciler reads them (values-file-watch.ts).
 */
function valuesAccess(sync: RSync, reconciler: string): { roles: OwnedRole[]; bindings: BindingRef[] } {
  const names = valuesConfigMapNamesOf(sync);
  if (names.length === 0) return { roles: [], bindings: [] };
  return ownedAccess({
    namespace: sync.metadata.namespace ?? "",
    name: valuesRoleName(reconciler),
    rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch"], resourceNames: names }],
  });
}

/**
 * The identity a valid sync's reconciler should have. A RepoSync has no roleRefs (the parser
 * refuses them): only the namespace's admin grants a namespace reconciler more than its base role.
 */
export function planIdentity(sync: RSync): IdentityPlan {
  const ref: SyncRef = { kind: sync.kind, namespace: sync.metadata.namespace ?? "", name: sync.metadata.name };
  const subject = subjectOf(ref);
  const serviceAccount = { namespace: subject.namespace, name: subject.name };
  const own = syncAccess(ref, subject.name);
  const secrets = secretAccess(sync, subject.name);
  const values = valuesAccess(sync, subject.name);
  const base = { serviceAccount, subject, roles: [...own.roles, ...secrets.roles, ...values.roles] };
  const ownBindings = [...own.bindings, ...secrets.bindings, ...values.bindings];
  if (sync.kind === Kind.RepoSync)
    return { ...base, shared: [nsShared(ref.namespace), nsCrdReader], notShared: [], owned: ownBindings };
  const roleRefs = sync.spec.override?.roleRefs ?? [];
  if (roleRefs.length === 0) return { ...base, shared: [rootLegacy], notShared: [rootBase], owned: ownBindings };
  // A Role is always namespaced; a ClusterRole with a namespace is granted in that namespace only.
  const owned = roleRefs.map((r) =>
    ownedBinding(subject.name, r, r.namespace === undefined || r.namespace === "" ? undefined : r.namespace),
  );
  return { ...base, shared: [rootBase], notShared: [rootLegacy], owned: [...owned, ...ownBindings] };
}

/** The subject of a sync's reconciler, from its identity alone. */
export function reconcilerSubject(sync: SyncRef): Subject {
  return subjectOf(sync);
}
