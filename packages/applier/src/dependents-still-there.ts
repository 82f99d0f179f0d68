import type { ResourceMapping } from "@driftless/kube";
import { mapLimit } from "./concurrency.ts";
import type { ObjectId } from "./object-id.ts";
import { pollUntilGone } from "./poll-until-gone.ts";
import type { PruneOptions } from "./prune.ts";

/** A dependent the prune deleted, as read before the delete. */
export interface DeletedObject {
  readonly id: ObjectId;
  readonly mapping: ResourceMapping;
  readonly namespace: string | undefined;
  readonly uid: string;
  /** Already Terminating when read: deleted and waited for by an earlier pass. */
  readonly terminating: boolean;
}

export type DependentsWaitOptions = Pick<PruneOptions, "client" | "concurrency" | "dependentsTimeoutMs" | "signal">;

/** Waits for deleted objects (their finalizers) to be gone; answers those still there at the deadline. */
export async function dependentsStillThere<T extends DeletedObject>(
  deleted: readonly T[],
  options: DependentsWaitOptions,
): Promise<T[]> {
  // Still Terminating from an earlier delete, waited for then: it holds its dependencies, with no new wait.
  const lingering = deleted.filter((c) => c.terminating);
  const waiting = await pollUntilGone(
    deleted.filter((c) => !c.terminating),
    {
      stillThere: (candidates) => sameObjectLive(candidates, options),
      deadline: performance.now() + (options.dependentsTimeoutMs ?? 300_000),
      signal: options.signal,
    },
  );
  return [...lingering, ...waiting];
}

/** Those of `candidates` whose object is still there; another object of the name (re-created since) is not. */
async function sameObjectLive<T extends DeletedObject>(
  candidates: readonly T[],
  options: DependentsWaitOptions,
): Promise<Set<T>> {
  const live = new Set<T>();
  await mapLimit(candidates, options.concurrency ?? 16, async (candidate) => {
    // Unreadable for now (a timeout, a 5xx): asked again next round, up to the deadline.
    const object = await options.client
      .get(candidate.mapping, candidate.namespace, candidate.id.name)
      .catch(() => ({ metadata: { uid: candidate.uid } }));
    if (object !== undefined && object.metadata.uid === candidate.uid) live.add(candidate);
  });
  return live;
}
