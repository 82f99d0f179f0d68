import { ManagedAnnotation, inventoryId, managerAnnotationValue } from "@driftless/api";
import { isConflict, type KubeClient, type KubeObject, type ResourceMapping } from "@driftless/kube";
import { stripManagement } from "./decorate.ts";
import type { SyncIdentity } from "./desired.ts";
import type { LiveState } from "./live-state.ts";

export interface ReleaseOptions {
  readonly client: KubeClient;
  readonly live: LiveState;
  readonly sync: SyncIdentity;
  readonly lastAppliedAnnotation: string;
}

/** The live object carries this sync's ownership: its owning-inventory or its manager annotation. */
function claimedBy(live: KubeObject, sync: SyncIdentity): boolean {
  const annotations = live.metadata.annotations ?? {};
  return (
    annotations[ManagedAnnotation.OwningInventory] === inventoryId(sync.namespace, sync.name) ||
    annotations[ManagedAnnotation.Manager] === managerAnnotationValue(sync.kind, sync.namespace, sync.name)
  );
}

/**
 * `configmanagement.gke.io/managed: disabled` on a declaration: the live object, when this sync
 * owns it, loses our metadata (as Config Sync un-manages it), so that no later pass or prune
 * touches it. Another sync's object, or an object of nobody's, is left exactly as it is.
 * Returns true when something was released.
 */
export async function releaseDeclared(
  mapping: ResourceMapping,
  namespace: string | undefined,
  name: string,
  options: ReleaseOptions,
): Promise<boolean> {
  // The cache answers the common case (nothing of ours) without a request.
  const cached = await options.live.get(mapping, namespace, name);
  if (cached === undefined || !claimedBy(cached, options.sync)) return false;
  for (let attempt = 1; ; attempt++) {
    // Written from a fresh read: the cache may hold a digest instead of the last-applied record.
    const live = await options.live.refresh(mapping, namespace, name);
    if (live === undefined || !claimedBy(live, options.sync)) return false;
    const stripped = stripManagement(live, options.lastAppliedAnnotation);
    if (stripped === undefined) return false;
    try {
      await options.client.update(mapping, live, stripped as KubeObject);
      options.live.forget(mapping, namespace, name);
      return true;
    } catch (error) {
      if (!isConflict(error) || attempt >= 4) throw error;
    }
  }
}
