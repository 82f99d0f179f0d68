/**
 * Waiting for an informer's first list, bounded. A type that cannot be listed (403, 5xx, a conversion
 * webhook down) must not hang a pass: the wait fails with the server's message at once on a 401 or 403,
 * and once the list has kept failing for the deadline otherwise. The informer keeps trying in the
 * background, so a later pass finds it listed.
 */
import { setTimeout as delay } from "node:timers/promises";
import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import { failureText, KubeApiError, type Informer, type ResourceMapping } from "@driftless/kube";

/** How often a wait looks at the informer's last error. */
const checkEveryMs = 250;

/** When each informer that has not listed yet was first seen failing, across waits. */
const failingSince = new WeakMap<Informer, number>();

export async function untilListed(informer: Informer, mapping: ResourceMapping, deadlineMs: number): Promise<void> {
  const failing = (): Error | undefined => {
    const error = informer.lastError;
    if (error === undefined) return undefined;
    const since = failingSince.get(informer) ?? performance.now();
    failingSince.set(informer, since);
    return forbidden(error) || performance.now() - since >= deadlineMs ? error : undefined;
  };
  for (;;) {
    const error = failing();
    if (error !== undefined) throw new ListFailedError(mapping, error);
    // A rejection is an informer that ended before its first list (the type is gone: a 404).
    const ended = (): true => true;
    const listed = await Promise.race([informer.synced().then(ended, ended), delay(checkEveryMs).then(() => false)]);
    if (listed && !informer.hasSynced) throw new ListFailedError(mapping, informer.lastError ?? new Error("stopped"));
    if (listed) {
      failingSince.delete(informer);
      return;
    }
    if (informer.lastError === undefined) failingSince.delete(informer);
  }
}

function forbidden(error: Error): boolean {
  return error instanceof KubeApiError && (error.status === 403 || error.status === 401);
}

/**
 * A type's objects could not be listed: the pass reports it and goes on with the other types. KNV2009, as
 * Config Sync's applier reports a type it cannot poll, whether RBAC refused the list or the server failed it.
 */
export class ListFailedError extends DriftlessError {
  constructor(mapping: ResourceMapping, cause: Error) {
    const gvr = `${mapping.group === "" ? "" : `${mapping.group}/`}${mapping.version}/${mapping.resource}`;
    super({
      code: KnvCode.Apply,
      errorClass: ErrorClass.Retry,
      message: `cannot list ${gvr}: ${failureText(cause)}`,
      cause,
    });
  }
}
