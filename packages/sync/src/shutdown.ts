import { closeRedisConnection, type Poller } from "@driftless/queue";
import { InformerLiveState } from "./live-cache.ts";
import type { PassLane } from "./pass-lane.ts";
import type { ReconcilerParts } from "./wiring.ts";

/** How long a stop lets the running pass go on before cutting its waits short. */
const cutWaitsAfterMs = 3_000;
/** ... and before failing its API requests: one a hung API server never answers would outlast the grace. */
const cutRequestsAfterMs = 7_000;

/** What a start left running beside the parts. */
export interface Serving {
  readonly poller: Poller | undefined;
  readonly lane: PassLane;
  readonly server: { close(): Promise<void> } | undefined;
}

/** The stop sequence: lets the running pass finish (bounded), then closes watches, queue, Redis and /metrics. */
export async function shutdown(parts: ReconcilerParts, serving: Serving, timeoutMs: number): Promise<void> {
  serving.poller?.stop();
  // Before the queue closes: from then on every enqueue fails, and must not start a pass here instead.
  const passesEnded = serving.lane.close();
  // A pass that is writing ends within seconds; one that waits (reconcileTimeout, a fetch, a render) is
  // cut short, so the process exits by itself inside the manager's grace (10 s) and the pod's (40 s).
  const cut = setTimeout(() => parts.abort.abort(), Math.min(timeoutMs, cutWaitsAfterMs));
  const cutRequests = setTimeout(() => parts.client.refuseRequests(), Math.min(timeoutMs, cutRequestsAfterMs));
  await parts.queue.close({ timeoutMs });
  // A pass run here while Redis was away, or a job's the queue let go of with Redis away, ends within
  // the same cuts as a job's.
  await passesEnded;
  clearTimeout(cut);
  parts.abort.abort();
  parts.remediator?.stop();
  parts.resourceGroupStatus.stop();
  await parts.resourceGroupStatus.settled();
  await parts.crdWatch?.stop();
  if (parts.live instanceof InformerLiveState) await parts.live.stop();
  await parts.namespaceWatch.stop();
  await parts.valuesWatch.stop();
  await parts.secretWatch.stop();
  await parts.ownSync.stop();
  // Not quit(): with Redis away, QUIT would wait behind the worker's queued commands for ever.
  await closeRedisConnection(parts.redis);
  await serving.server?.close();
  await parts.sources.clear();
  // Armed to the end: a ResourceGroup status write in flight (settled() above) may meet a hung API server too.
  clearTimeout(cutRequests);
  parts.client.close();
}
