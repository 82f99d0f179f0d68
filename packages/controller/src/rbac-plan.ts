/**
 * Who a sync's reconciler is and what it may do, as data: its ServiceAccount and the role
 * bindings that grant it permissions. Names follow Config Sync's reconciler-manager, so operators
 * find the same objects:
 * - RootSync: the shared ClusterRoleBinding `configsync.gke.io:root-reconciler` to cluster-admin;
 *   or, with `spec.override.roleRefs`, the shared `configsync.gke.io:root-reconciler-base` (the
 *   sync's own status and inventory) plus one binding per roleRef, named after the reconciler.
 * - RepoSync: the shared RoleBinding `configsync.gke.io:ns-reconciler` in the sync's namespace,
 *   and nothing outside it, plus one RoleBinding per roleRef in that namespace.
 * Shared bindings list one subject per reconciler; a reconciler's teardown removes its subject.
 */
import { createHash } from "node:crypto";
import {
  Kind,
  reconcilerName,
  RootSyncNamespace,
  type RoleRef,
  type RootSyncRoleRef,
  type RSync,
} from "@driftless/api";
import type { SyncRef } from "@driftless/queue";

export const RbacName = {
  /** Shared ClusterRoleBinding of root reconcilers without roleRefs, to cluster-admin. */
  RootLegacyBinding: "configsync.gke.io:root-reconciler",
  /** Shared ClusterRoleBinding of root reconcilers with roleRefs, to the base ClusterRole. */
  RootBaseBinding: "configsync.gke.io:root-reconciler-base",
  /** ClusterRole with what every root reconciler needs (manifests/reconciler-rbac.yaml). */
  RootBaseRole: "configsync.gke.io:root-reconciler",
  /** Shared RoleBinding in a RepoSync's namespace, and the ClusterRole it binds. */
  NsBinding: "configsync.gke.io:ns-reconciler",
  NsRole: "configsync.gke.io:ns-reconciler",
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

export interface IdentityPlan {
  readonly serviceAccount: { readonly namespace: string; readonly name: string };
  readonly subject: Subject;
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

/** The shared bindings a sync's subject may appear in, whatever its spec says (for teardown). */
export function sharedBindingsOf(sync: SyncRef): readonly BindingRef[] {
  return sync.kind === Kind.RootSync ? [rootLegacy, rootBase] : [nsShared(sync.namespace)];
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

/** The identity a valid sync's reconciler should have. */
export function planIdentity(sync: RSync): IdentityPlan {
  const ref: SyncRef = { kind: sync.kind, namespace: sync.metadata.namespace ?? "", name: sync.metadata.name };
  const subject = subjectOf(ref);
  const serviceAccount = { namespace: subject.namespace, name: subject.name };
  if (sync.kind === Kind.RootSync) {
    const roleRefs = sync.spec.override?.roleRefs ?? [];
    if (roleRefs.length === 0)
      return { serviceAccount, subject, shared: [rootLegacy], notShared: [rootBase], owned: [] };
    // A Role is always namespaced; a ClusterRole with a namespace is granted in that namespace only.
    const owned = roleRefs.map((r) =>
      ownedBinding(subject.name, r, r.namespace === undefined || r.namespace === "" ? undefined : r.namespace),
    );
    return { serviceAccount, subject, shared: [rootBase], notShared: [rootLegacy], owned };
  }
  const roleRefs: readonly RoleRef[] = sync.spec.override?.roleRefs ?? [];
  const owned = roleRefs.map((r) => ownedBinding(subject.name, r, ref.namespace));
  return { serviceAccount, subject, shared: [nsShared(ref.namespace)], notShared: [], owned };
}

/** The subject of a sync's reconciler, from its identity alone. */
export function reconcilerSubject(sync: SyncRef): Subject {
  return subjectOf(sync);
}
