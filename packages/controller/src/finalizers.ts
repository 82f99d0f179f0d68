/**
 * The manager's finalizer work on RootSync/RepoSync objects. It owns
 * `configsync.gke.io/reconciler-manager` (held until the reconciler is torn down) and, for one
 * case only, removes the reconciler's `configsync.gke.io/reconciler`: see `namespaceTerminating`.
 */
import type { KubeClient, KubeObject } from "@driftless/kube";
import type { SyncRef } from "@driftless/queue";
import { mutate } from "./mutate.ts";
import { Resource, syncMapping } from "./resources.ts";

export function hasFinalizer(obj: KubeObject, finalizer: string): boolean {
  return (obj.metadata.finalizers ?? []).includes(finalizer);
}

/** Adds `finalizer` unless present or the object is already being deleted (the API server refuses new finalizers then). */
export async function addFinalizer(client: KubeClient, sync: SyncRef, finalizer: string): Promise<void> {
  await mutate(client, syncMapping(sync.kind), sync.namespace, sync.name, (live) => {
    if (live.metadata.deletionTimestamp !== undefined || hasFinalizer(live, finalizer)) return undefined;
    return { ...live, metadata: { ...live.metadata, finalizers: [...(live.metadata.finalizers ?? []), finalizer] } };
  });
}

/** Removes `finalizer`; true when this call removed it (false when it was already gone). */
export async function removeFinalizer(client: KubeClient, sync: SyncRef, finalizer: string): Promise<boolean> {
  let removed = false;
  await mutate(client, syncMapping(sync.kind), sync.namespace, sync.name, (live) => {
    removed = false;
    if (!hasFinalizer(live, finalizer)) return undefined;
    removed = true;
    return {
      ...live,
      metadata: { ...live.metadata, finalizers: (live.metadata.finalizers ?? []).filter((f) => f !== finalizer) },
    };
  });
  return removed;
}

/**
 * True when `namespace` is being deleted (or already gone). The namespace controller then deletes
 * everything in it, including the RoleBinding that lets a RepoSync's reconciler update its
 * RepoSync: the reconciler can no longer remove its own finalizer, and without help the namespace
 * would stay Terminating forever. Its managed objects are in the same namespace and are deleted
 * by the namespace controller anyway, so nothing is lost by not waiting for the reconciler.
 */
export async function namespaceTerminating(client: KubeClient, namespace: string): Promise<boolean> {
  const ns = await client.get(Resource.Namespace, undefined, namespace);
  if (ns === undefined) return true;
  const phase = (ns["status"] as { phase?: unknown } | undefined)?.phase;
  return phase === "Terminating" || ns.metadata.deletionTimestamp !== undefined;
}
