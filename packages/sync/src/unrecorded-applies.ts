/**
 * Which objects a pass leaves out of its inventory: as Config Sync's inventory task keeps a failed or
 * skipped apply only when the previous inventory held it, an object new in this commit that the API server
 * refused (quota, admission policy, invalid) or that was never sent (a dependency not ready, another
 * sync's object) is not recorded, nor shown in the ResourceGroup's status, until an apply succeeds.
 */
import { KnvCode } from "@driftless/api";
import { idKey, Operation, type ApplyOutcome, type ObjectId } from "@driftless/applier";
import { KubeApiError } from "@driftless/kube";

/** idKeys of the outcomes in `applied` that are new (not in `previous`) and left nothing in the cluster. */
export function unrecordedApplies(applied: readonly ApplyOutcome[], previous: readonly ObjectId[]): Set<string> {
  const recorded = new Set(previous.map(idKey));
  const unrecorded = new Set<string>();
  for (const outcome of applied) {
    const key = idKey(outcome.desired.id);
    if (!recorded.has(key) && wroteNothing(outcome)) unrecorded.add(key);
  }
  return unrecorded;
}

/**
 * A skipped apply sent nothing; a failed one wrote nothing of ours when the server refused it (4xx) or it was
 * never sent (a conflict with another manager). A timeout or a 5xx may have stored the object, and a refused
 * update of an object already this sync's (an inventory lost with its ResourceGroup) leaves it in place: each
 * stays recorded so that a later commit can prune it. Someone else's object whose adoption was refused is not.
 */
function wroteNothing(outcome: ApplyOutcome): boolean {
  if (outcome.operation === Operation.Skipped) return true;
  if (outcome.operation !== Operation.Failed || outcome.error === undefined) return false;
  const cause = outcome.error.cause;
  if (cause instanceof KubeApiError) return cause.status >= 400 && cause.status < 500 && outcome.liveOwned !== true;
  return cause === undefined && outcome.error.code === KnvCode.ManagementConflict;
}
