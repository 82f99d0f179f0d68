import type { KubeClient, ResourceMapping, RestMapper } from "@driftless/kube";
import { mapLimit } from "./concurrency.ts";
import type { ObjectId } from "./object-id.ts";
import { pollUntilGone } from "./poll-until-gone.ts";
import { PruneOperation, type PruneOutcome } from "./prune.ts";

export interface SettlePrunedOptions {
  readonly client: KubeClient;
  readonly mapper: RestMapper;
  /** override.reconcileTimeout (Config Sync's default 5 min). */
  readonly timeoutMs: number;
  readonly concurrency?: number;
  /** Called once, with what is still there after the first look, before waiting for it. */
  readonly onWait?: (lingering: readonly ObjectId[]) => void;
  readonly signal?: AbortSignal | undefined;
}

/**
 * Config Sync's wait after prune (cli-utils' wait task for NotFound): the pass ends only once what it
 * deleted is gone (its finalizers done, a Namespace emptied), or override.reconcileTimeout has passed.
 * So a sync reported synced has no pruned object left Terminating, and a commit that declares it again
 * creates it anew. Returns what was still there at the timeout, which Config Sync does not count as an error
 * but keeps in its inventory; objects still Terminating from an earlier pass are checked, not waited for.
 */
export async function settlePruned(
  outcomes: readonly PruneOutcome[],
  options: SettlePrunedOptions,
): Promise<ObjectId[]> {
  // Gone at the server's answer (most objects: no finalizer holds them) cost no read.
  const deleted = outcomes.filter((o) => o.operation === PruneOperation.Deleted && o.gone !== true);
  // One an earlier pass deleted and waited for, still Terminating: not waited for in every pass again.
  const lingering = deleted.filter((o) => o.terminating === true).map((o) => o.id);
  const waiting = await pollUntilGone(
    deleted.filter((o) => o.terminating !== true).map((o) => o.id),
    {
      stillThere: (ids) => stillDeleting(ids, options),
      deadline: performance.now() + options.timeoutMs,
      signal: options.signal,
      onWait: options.onWait,
    },
  );
  // Also when stopped (shutdown): what is still there stays in the inventory, for the next pass to decide.
  return [...lingering, ...waiting];
}

/**
 * Those of `ids` still being deleted: an object of the name that carries a deletionTimestamp (one without is
 * a new one). Only what the server answered as held gets here: a Namespace, a CRD, an object with finalizers.
 */
async function stillDeleting(ids: readonly ObjectId[], options: SettlePrunedOptions): Promise<Set<ObjectId>> {
  // Every kind at once: the kinds of CRDs pruned in this pass miss discovery, and misses at once share one
  // refresh (one by one, each would wait for the next refresh: minutes for thousands of custom resources).
  const kinds = new Map<string, Promise<ResourceMapping | undefined | "unreadable">>();
  for (const id of ids) {
    const key = `${id.group}/${id.kind}`;
    if (!kinds.has(key))
      kinds.set(
        key,
        options.mapper.mappingForGroupKind(id.group, id.kind).catch(() => "unreadable" as const),
      );
  }
  const still = new Set<ObjectId>();
  await mapLimit(ids, options.concurrency ?? 16, async (id) => {
    const mapping = await kinds.get(`${id.group}/${id.kind}`);
    // Its type is gone with it (a CRD pruned in the same pass): so are its objects.
    if (mapping === undefined) return;
    if (mapping === "unreadable" || (await deleting(mapping, id, options))) still.add(id);
  });
  return still;
}

async function deleting(mapping: ResourceMapping, id: ObjectId, options: SettlePrunedOptions): Promise<boolean> {
  try {
    const live = await options.client.get(mapping, mapping.namespaced ? id.namespace : undefined, id.name);
    return live?.metadata.deletionTimestamp !== undefined;
  } catch {
    // Unreadable for now (a timeout, a 5xx): asked again next round, up to the deadline.
    return true;
  }
}
