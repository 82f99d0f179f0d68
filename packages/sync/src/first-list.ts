/**
 * Waiting for an informer's first list, bounded. A type that cannot be listed (403, 5xx, a conversion
 * webhook down) must not hang a pass: the wait fails with the server's message at once on a 401 or 403,
 * and once the list has kept failing for the deadline otherwise. The informer keeps trying in the
 * background, so a later pass finds it listed.
 */
import { setTimeout as delay } from "node:timers/promises";
import { DriftlessError, KnvCode, toDriftlessError } from "@driftless/api";
import { failureText, KubeApiError, type Informer, type ResourceMapping } from "@driftless/kube";

/** How often a wait looks at the informer's last error. */
const checkEveryMs = 250;

/** When each informer that has not listed yet was first seen failing, across waits. */
const failingSince = new WeakMap<Informer, number>();

/** `signal`: the reconciler stopping ends the wait at once (the pass is cut short). */
export async function untilListed(
  informer: Informer,
  mapping: ResourceMapping,
  deadlineMs: number,
  signal?: AbortSignal,
): Promise<void> {
  const failing = (): Error | undefined => {
    const error = informer.lastError;
    if (error === undefined) return undefined;
    const since = failingSince.get(informer) ?? performance.now();
    failingSince.set(informer, since);
    return refused(error) || performance.now() - since >= deadlineMs ? error : undefined;
  };
  for (;;) {
    if (signal?.aborted === true) throw new ListFailedError(mapping, new Error("the reconciler is stopping"));
    const error = failing();
    if (error !== undefined) throw new ListFailedError(mapping, error);
    // A rejection is an informer that ended before its first list (the type is gone: a 404).
    const ended = (): true => true;
    const pause = delay(checkEveryMs, undefined, signal === undefined ? {} : { signal }).then(
      () => false,
      () => false,
    );
    const listed = await Promise.race([informer.synced().then(ended, ended), pause]);
    if (listed && !informer.hasSynced) throw new ListFailedError(mapping, informer.lastError ?? new Error("stopped"));
    if (listed) {
      failingSince.delete(informer);
      return;
    }
    if (informer.lastError === undefined) failingSince.delete(informer);
  }
}

/**
 * A type's objects could not be listed: the pass reports it and goes on with the other types. KNV2009, as
 * Config Sync's applier reports a type it cannot poll, whether RBAC refused the list or the server failed it.
 */
export class ListFailedError extends DriftlessError {
  constructor(mapping: ResourceMapping, cause: Error) {
    super({
      code: KnvCode.Apply,
      // A refusal (401/403) lasts until someone grants the list, so it is not a retry that holds back prune.
      errorClass: toDriftlessError(cause).errorClass,
      // Config Sync's wording: its status poller lists each type the sync applies.
      message: `polling for status failed: failed to list ${groupVersionKind(mapping)}: ${failureText(cause)}`,
      cause,
    });
  }
}

/**
 * The API server refuses to watch a type (403): its objects are read from the server instead (see
 * InformerLiveState.trusted), but drift on them is not seen until a full pass. KNV2009, as Config Sync's
 * applier fails a sync whose reconciler may not watch a type it manages.
 */
export class WatchRefusedError extends DriftlessError {
  constructor(mapping: ResourceMapping, cause: Error) {
    super({
      code: KnvCode.Apply,
      // Lasting as a refused list is (terminal): retrying whole passes with backoff cannot grant the watch.
      errorClass: toDriftlessError(cause).errorClass,
      // Config Sync's wording; a 403's text names the verb and the resource (a 401's is "Unauthorized").
      message: `polling for status failed: ${failureText(cause)}`,
      cause,
    });
  }
}

/** Whether an informer's last failure is a refusal (401, 403): retrying does not help until someone grants it. */
export function refused(error: Error | undefined): error is KubeApiError {
  return error instanceof KubeApiError && (error.status === 403 || error.status === 401);
}

/** As Go prints a GroupVersionKind: `apps/v1, Kind=Deployment`, `/v1, Kind=ConfigMap`. */
function groupVersionKind(mapping: ResourceMapping): string {
  return `${mapping.group}/${mapping.version}, Kind=${mapping.kind}`;
}
