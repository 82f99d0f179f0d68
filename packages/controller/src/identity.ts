/**
 * Creates and removes a reconciler's identity on the cluster: its ServiceAccount, role bindings
 * and its own Roles: its RSync and ResourceGroups, and the Secrets its spec names, by name (see rbac-plan.ts). Used by both reconciler modes: a Deployment
 * runs as the ServiceAccount, a child process gets a token minted for it, so a RepoSync's
 * reconciler has the same permissions, inside its namespace only, in either mode.
 */
import { isDeepStrictEqual } from "node:util";
import { Kind, RootSyncNamespace, SyncLabel } from "@driftless/api";
import { isAlreadyExists, isConflict, isNotFound, type KubeClient, type KubeObject } from "@driftless/kube";
import type { SyncRef } from "@driftless/queue";
import {
  ownRoleBindingLabels,
  ownRoleBindingSelector,
  sharedLabels,
  syncOwnedLabels,
  syncOwnedSelector,
} from "./labels.ts";
import { mutate } from "./mutate.ts";
import { sharedBindingsOf, reconcilerSubject, type BindingRef, type IdentityPlan, type Subject } from "./rbac-plan.ts";
import { Resource } from "./resources.ts";
import { deleteRole, ensureOwnedRole, listOwnedRoles } from "./owned-roles.ts";
import { assertReconcilerNameFree, serviceAccountHolder } from "./reconciler-name.ts";

const rbacApiVersion = "rbac.authorization.k8s.io/v1";
const rbacGroup = "rbac.authorization.k8s.io";

function mappingOf(binding: BindingRef): typeof Resource.RoleBinding {
  return binding.kind === "RoleBinding" ? Resource.RoleBinding : Resource.ClusterRoleBinding;
}

function bindingObject(binding: BindingRef, subjects: readonly Subject[], labels: Record<string, string>): KubeObject {
  return {
    apiVersion: rbacApiVersion,
    kind: binding.kind,
    metadata: {
      name: binding.name,
      ...(binding.namespace === undefined ? {} : { namespace: binding.namespace }),
      labels,
    },
    roleRef: { apiGroup: rbacGroup, kind: binding.roleRef.kind, name: binding.roleRef.name },
    subjects: subjects.map((s) => ({ kind: s.kind, name: s.name, namespace: s.namespace })),
  };
}

function subjectsOf(obj: KubeObject): Subject[] {
  const raw = Array.isArray(obj["subjects"]) ? (obj["subjects"] as unknown[]) : [];
  return raw.flatMap((s) => {
    const r = s as Record<string, unknown>;
    return r["kind"] === "ServiceAccount" && typeof r["name"] === "string" && typeof r["namespace"] === "string"
      ? [{ kind: "ServiceAccount" as const, name: r["name"], namespace: r["namespace"] }]
      : [];
  });
}

function sameSubject(a: Subject, b: Subject): boolean {
  return a.name === b.name && a.namespace === b.namespace;
}

function roleRefMatches(obj: KubeObject, binding: BindingRef): boolean {
  const roleRef = obj["roleRef"] as Record<string, unknown> | undefined;
  return roleRef?.["kind"] === binding.roleRef.kind && roleRef["name"] === binding.roleRef.name;
}

/**
 * Brings the ServiceAccount and every binding of `plan` into place; removes bindings the plan dropped.
 * Throws ReconcilerNameTakenError, having changed nothing, when the ServiceAccount is another sync's.
 */
export async function ensureIdentity(client: KubeClient, sync: SyncRef, plan: IdentityPlan): Promise<void> {
  await ensureServiceAccount(client, sync, plan);
  for (const role of plan.roles) await ensureOwnedRole(client, role, syncOwnedLabels(sync));
  for (const binding of plan.shared) await addSubject(client, binding, plan.subject);
  for (const binding of plan.notShared) await removeSubject(client, binding, plan.subject);
  for (const binding of plan.owned) {
    const labels = bindsOwnRole(plan, binding) ? ownRoleBindingLabels(sync) : syncOwnedLabels(sync);
    await ensureOwnedBinding(client, binding, plan.subject, labels);
  }
  const wanted = new Set(plan.owned.map((b) => `${b.kind}/${b.namespace ?? ""}/${b.name}`));
  for (const stale of await listOwnedBindings(client, sync)) {
    const key = `${stale.kind}/${stale.metadata.namespace ?? ""}/${stale.metadata.name}`;
    if (!wanted.has(key)) await deleteBinding(client, stale);
  }
  // After the bindings: a spec that no longer names Secrets (or moved) loses that Role last.
  const wantedRoles = new Set(plan.roles.map((r) => `${r.namespace}/${r.name}`));
  for (const stale of await listOwnedRoles(client, sync)) {
    if (!wantedRoles.has(`${stale.metadata.namespace ?? ""}/${stale.metadata.name}`)) await deleteRole(client, stale);
  }
}

/** The binding of one of the sync's own Roles (its RSync, Secrets, values), not of a roleRef. */
function bindsOwnRole(plan: IdentityPlan, binding: BindingRef): boolean {
  return (
    binding.roleRef.kind === "Role" &&
    binding.roleRef.name === binding.name &&
    plan.roles.some((r) => r.namespace === binding.namespace && r.name === binding.name)
  );
}

/**
 * Removes everything `ensureIdentity` may have created for `sync`, whatever its spec was. What goes
 * by the reconciler's name (the ServiceAccount, its subject in the shared bindings) stays when
 * another sync holds that name (reconciler-name.ts), or when `keepNamed` says the caller found so.
 */
export async function removeIdentity(
  client: KubeClient,
  sync: SyncRef,
  options: { readonly keepNamed?: boolean } = {},
): Promise<void> {
  const subject = reconcilerSubject(sync);
  for (const owned of await listOwnedBindings(client, sync)) await deleteBinding(client, owned);
  for (const role of await listOwnedRoles(client, sync)) await deleteRole(client, role);
  if (options.keepNamed === true || (await serviceAccountHolder(client, sync)) !== undefined) return;
  for (const binding of sharedBindingsOf(sync)) await removeSubject(client, binding, subject);
  await client.delete(Resource.ServiceAccount, RootSyncNamespace, subject.name);
}

async function ensureServiceAccount(client: KubeClient, sync: SyncRef, plan: IdentityPlan): Promise<void> {
  const labels = syncOwnedLabels(sync);
  const { namespace, name } = plan.serviceAccount;
  const live = await client.get(Resource.ServiceAccount, namespace, name);
  // Another sync of the same reconciler name holds it: touch nothing of its.
  assertReconcilerNameFree(sync, [live]);
  if (live === undefined) {
    try {
      await client.create(Resource.ServiceAccount, {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name, namespace, labels },
      });
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
      // Created meanwhile (another replica, or a sync of the same name): whose is it?
      assertReconcilerNameFree(sync, [await client.get(Resource.ServiceAccount, namespace, name)]);
    }
    return;
  }
  // Labels are how a teardown after a manager restart finds the account again: keep them right.
  if (Object.entries(labels).some(([k, v]) => live.metadata.labels?.[k] !== v)) {
    await mutate(client, Resource.ServiceAccount, namespace, name, (sa) => ({
      ...sa,
      metadata: { ...sa.metadata, labels: { ...sa.metadata.labels, ...labels } },
    }));
  }
}

/** Adds the subject to a shared binding, creating it if needed (and recreating it if its roleRef, immutable, is wrong). */
async function addSubject(client: KubeClient, binding: BindingRef, subject: Subject): Promise<void> {
  const m = mappingOf(binding);
  for (let attempt = 0; attempt < 5; attempt++) {
    const live = await client.get(m, binding.namespace, binding.name);
    if (live !== undefined && !roleRefMatches(live, binding)) {
      await client
        .delete(m, binding.namespace, binding.name, {
          preconditions: { resourceVersion: live.metadata.resourceVersion ?? "" },
        })
        .catch(ignoreConflict);
      continue;
    }
    if (live === undefined) {
      try {
        await client.create(m, bindingObject(binding, [subject], sharedLabels()));
        return;
      } catch (error) {
        if (isAlreadyExists(error)) continue;
        throw error;
      }
    }
    const written = await mutate(client, m, binding.namespace, binding.name, (current) => {
      const subjects = subjectsOf(current);
      if (subjects.some((s) => sameSubject(s, subject))) return undefined;
      return { ...current, subjects: [...((current["subjects"] as unknown[] | undefined) ?? []), { ...subject }] };
    });
    if (written !== undefined) return;
  }
  throw new Error(`${binding.kind} ${binding.name}: could not add ${subject.name} after repeated races`);
}

/** Removes the subject from a shared binding; the last subject out deletes the binding. */
async function removeSubject(client: KubeClient, binding: BindingRef, subject: Subject): Promise<void> {
  const m = mappingOf(binding);
  const live = await mutate(client, m, binding.namespace, binding.name, (current) => {
    const raw = (current["subjects"] as Record<string, unknown>[] | undefined) ?? [];
    const kept = raw.filter(
      (s) => !(s["kind"] === "ServiceAccount" && s["name"] === subject.name && s["namespace"] === subject.namespace),
    );
    if (kept.length === raw.length) return undefined;
    return { ...current, subjects: kept };
  });
  if (live !== undefined && ((live["subjects"] as unknown[] | undefined) ?? []).length === 0) {
    // The precondition keeps a subject added meanwhile by another sync's setup.
    await client
      .delete(m, binding.namespace, binding.name, {
        preconditions: { resourceVersion: live.metadata.resourceVersion ?? "" },
      })
      .catch(ignoreConflict);
  }
}

async function ensureOwnedBinding(
  client: KubeClient,
  binding: BindingRef,
  subject: Subject,
  labels: Record<string, string>,
): Promise<void> {
  const m = mappingOf(binding);
  const desired = bindingObject(binding, [subject], labels);
  const live = await client.get(m, binding.namespace, binding.name);
  if (live !== undefined && roleRefMatches(live, binding)) {
    // Subjects and labels are mutable: put them right in place.
    await mutate(client, m, binding.namespace, binding.name, (current) => {
      const subjects = subjectsOf(current);
      const merged = mergedLabels(current.metadata.labels, labels);
      const right =
        subjects.length === 1 &&
        subjects.every((s) => sameSubject(s, subject)) &&
        isDeepStrictEqual(merged, current.metadata.labels ?? {});
      return right
        ? undefined
        : { ...current, metadata: { ...current.metadata, labels: merged }, subjects: desired["subjects"] };
    });
    return;
  }
  // roleRef is immutable: a binding to another role is replaced.
  if (live !== undefined) await client.delete(m, binding.namespace, binding.name);
  try {
    await client.create(m, desired);
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
  }
}

/**
 * `wanted` over the live labels; sync-name goes when `wanted` names the sync otherwise (a binding of
 * its own Role an earlier version labelled as a roleRef's), and stays on a roleRef's binding.
 */
function mergedLabels(
  live: Readonly<Record<string, string>> | undefined,
  wanted: Record<string, string>,
): Record<string, string> {
  const merged: Record<string, string> = { ...live, ...wanted };
  if (!(SyncLabel.SyncName in wanted)) delete merged[SyncLabel.SyncName];
  return merged;
}

async function listOwnedBindings(client: KubeClient, sync: SyncRef): Promise<KubeObject[]> {
  const labelSelector = syncOwnedSelector(sync);
  const namespace = bindingNamespaceOf(sync);
  const [roleBindings, clusterRoleBindings, ownRoleBindings] = await Promise.all([
    client.list(Resource.RoleBinding, { labelSelector, ...namespace }),
    client.list(Resource.ClusterRoleBinding, { labelSelector }),
    client.list(Resource.RoleBinding, { labelSelector: ownRoleBindingSelector(sync), ...namespace }),
  ]);
  return [...roleBindings.items, ...clusterRoleBindings.items, ...ownRoleBindings.items];
}

/**
 * Where a sync's RoleBindings can be: a RepoSync's only in its namespace; a RootSync's anywhere (a roleRef names
 * a namespace). Labels are anyone's to write, so one labelled for a RepoSync in another tenant's namespace is that
 * tenant's, never deleted as the RepoSync's.
 */
function bindingNamespaceOf(sync: SyncRef): { namespace?: string } {
  return sync.kind === Kind.RepoSync ? { namespace: sync.namespace } : {};
}

async function deleteBinding(client: KubeClient, obj: KubeObject): Promise<void> {
  const m = obj.kind === "RoleBinding" ? Resource.RoleBinding : Resource.ClusterRoleBinding;
  await client.delete(m, obj.kind === "RoleBinding" ? obj.metadata.namespace : undefined, obj.metadata.name);
}

function ignoreConflict(error: unknown): void {
  // Someone changed or deleted the binding since we read it; the caller re-reads (or the next job does).
  if (isNotFound(error) || isConflict(error)) return;
  throw error;
}
