/**
 * Who holds a reconciler name. Config Sync's naming is not injective: RepoSync `shop-db-2/repo-sync`
 * and RepoSync `shop/db` are both `ns-reconciler-shop-db-2`. Everything the manager makes under that
 * name (the ServiceAccount, the Deployment, its Redis Secret, a process-mode state folder) carries the
 * labels of the sync it was made for (labels.ts); the sync already holding the name keeps it. Another
 * sync of the same name is refused (KNV1061, Stalled) and its teardown leaves those objects alone.
 */
import { InvalidSyncError, reconcilerName, RootSyncNamespace } from "@driftless/api";
import type { KubeClient, KubeObject } from "@driftless/kube";
import type { SyncRef } from "@driftless/queue";
import { configSyncSyncOfLabels, syncOfLabels } from "./labels.ts";
import { Resource } from "./resources.ts";

/** A sync whose reconciler name another sync already holds. Terminal: it waits for a change (or for the holder to go). */
export class ReconcilerNameTakenError extends InvalidSyncError {
  readonly holder: SyncRef;

  constructor(sync: SyncRef, name: string, holder: SyncRef) {
    super(sync, `reconciler name ${name} is already used by ${holder.kind} ${holder.namespace}/${holder.name}`);
    this.holder = holder;
  }
}

function sameSync(a: SyncRef, b: SyncRef): boolean {
  return a.kind === b.kind && a.namespace === b.namespace && a.name === b.name;
}

/**
 * The other sync that objects of `sync`'s reconciler name are labelled for, if any: the first of
 * `labels` naming a sync that is not `sync`. Objects that are absent (undefined), unlabelled, or made
 * by neither this manager nor Config Sync's hold nothing against it. Config Sync's (taking over from it)
 * count: a RepoSync `shop/db` must not delete or adopt the reconciler Config Sync still runs for `shop-db-2`.
 */
export function reconcilerNameHolder(
  sync: SyncRef,
  labels: readonly (Readonly<Record<string, string>> | undefined)[],
): SyncRef | undefined {
  for (const set of labels) {
    const owner = syncOfLabels(set) ?? configSyncSyncOfLabels(set);
    if (owner !== undefined && !sameSync(owner, sync)) return owner;
  }
  return undefined;
}

/** The other sync holding `sync`'s reconciler name by its ServiceAccount's labels (both modes have one). */
export async function serviceAccountHolder(client: KubeClient, sync: SyncRef): Promise<SyncRef | undefined> {
  const account = await client.get(Resource.ServiceAccount, RootSyncNamespace, nameOf(sync));
  return reconcilerNameHolder(sync, [account?.metadata.labels]);
}

/** Throws ReconcilerNameTakenError when any of `objects` (of `sync`'s reconciler name) is another sync's. */
export function assertReconcilerNameFree(sync: SyncRef, objects: readonly (KubeObject | undefined)[]): void {
  const holder = reconcilerNameHolder(
    sync,
    objects.map((o) => o?.metadata.labels),
  );
  if (holder !== undefined) throw new ReconcilerNameTakenError(sync, nameOf(sync), holder);
}

export function nameOf(sync: SyncRef): string {
  return reconcilerName(sync.kind, sync.namespace, sync.name);
}
