/**
 * `driftless.dev/sync-requested-at` answered: after the status of a pass that began with the request
 * is written, the reconciler echoes the request's value in `driftless.dev/sync-request-handled`, so
 * `driftless sync --wait` knows the status it reads is that of a pass newer than its request.
 */
import { SyncAnnotation } from "@driftless/api";
import type { SyncIdentity } from "@driftless/applier";
import type { KubeClient } from "@driftless/kube";
import type { Logger } from "./log.ts";
import { rsyncMapping } from "./rsync.ts";

export async function recordSyncRequestHandled(
  client: KubeClient,
  identity: SyncIdentity,
  request: string,
  log: Logger,
): Promise<void> {
  // A merge patch of one annotation: no resourceVersion to race the manager's or a user's writes.
  const patch = { metadata: { annotations: { [SyncAnnotation.SyncRequestHandled]: request } } };
  try {
    await client.patch(rsyncMapping(identity.kind), identity.namespace, identity.name, patch, "merge");
  } catch (error) {
    // The pass is done either way; the request stays pending and the next pass answers it.
    log.warn("could not record the sync request as handled", { request, error: String(error) });
  }
}
