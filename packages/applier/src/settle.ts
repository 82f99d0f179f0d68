import { setTimeout as delay } from "node:timers/promises";
import { Operation, type ApplyOutcome } from "./apply-outcome.ts";
import type { KubeClient } from "@driftless/kube";
import { HealthStatus } from "./kstatus.ts";
import type { LiveState } from "./live-state.ts";
import { WaitHealth } from "./pod-controller-health.ts";

export interface SettleOptions {
  readonly live: Pick<LiveState, "get">;
  /** Lists the Pods of a ReplicaSet or StatefulSet waited for, which may make it Failed (pod-controller-health.ts). */
  readonly pods?: Pick<KubeClient, "list">;
  /** override.reconcileTimeout (Config Sync's default 5 min). */
  readonly timeoutMs: number;
  /** How often the live state is read while waiting; default 250 ms (a watch cache in the reconciler). */
  readonly pollMs?: number;
  readonly signal?: AbortSignal | undefined;
  /** Waits for objects the pass left unchanged too (what an earlier reconciler waited for is not known). */
  readonly unchanged?: boolean;
}

export interface Settled {
  /** The outcomes with each waited-for object's last health. */
  readonly outcomes: readonly ApplyOutcome[];
  /** What was still neither Current nor Failed when the timeout passed. */
  readonly timedOut: readonly ApplyOutcome[];
}

/**
 * Config Sync's wait after apply: the pass ends only once every object it wrote is Current (or
 * Failed), or override.reconcileTimeout has passed. A timeout does not stop the pass: the caller
 * reports what timed out (KNV2009 on status.sync) and the prune goes on. Objects this pass left
 * unchanged were waited for when they were written, so a stuck one does not hold every resync.
 */
export async function settleApplied(outcomes: readonly ApplyOutcome[], options: SettleOptions): Promise<Settled> {
  // Most writes are answered Current at once (a ConfigMap): then nothing is waited for or allocated.
  let pending = outcomes.filter((o) => awaited(o, options.unchanged === true) && !settledHealth(o.health));
  if (pending.length === 0) return { outcomes, timedOut: [] };
  const health = new Map<ApplyOutcome, HealthStatus>();
  const reader = new WaitHealth(options.live, options.pods);
  const deadline = Date.now() + options.timeoutMs;
  while (pending.length > 0 && Date.now() < deadline && options.signal?.aborted !== true) {
    await delay(Math.min(options.pollMs ?? 250, Math.max(0, deadline - Date.now())));
    const settled = new Set<ApplyOutcome>();
    for (const outcome of pending) {
      const { mapping } = outcome;
      if (mapping === undefined) continue;
      const { id } = outcome.desired;
      const read = await reader.read(mapping, id.namespace, id.name);
      // The outcome keeps the object's own kstatus (its ResourceGroup entry, as Config Sync's controller reads it).
      health.set(outcome, read.object);
      if (settledHealth(read.wait)) settled.add(outcome);
    }
    pending = pending.filter((o) => !settled.has(o));
  }
  // Stopped (shutdown) before the timeout: nothing timed out; the next pass decides again.
  const stuck = options.signal?.aborted === true ? new Set<ApplyOutcome>() : new Set(pending);
  const updated = outcomes.map((o) => {
    const last = health.get(o);
    return last === undefined || last === o.health ? o : { ...o, health: last };
  });
  return { outcomes: updated, timedOut: updated.filter((_, i) => stuck.has(outcomes[i] as ApplyOutcome)) };
}

/** Written by this pass (or, with `unchanged`, applied) without error: what Config Sync's applier waits for. */
function awaited(outcome: ApplyOutcome, unchanged: boolean): boolean {
  const written = outcome.operation === Operation.Created || outcome.operation === Operation.Updated;
  const applied = written || (unchanged && outcome.operation === Operation.Unchanged);
  return applied && outcome.error === undefined && outcome.mapping !== undefined;
}

/** kstatus stops waiting at Current, and at Failed, which waiting will not change. */
function settledHealth(health: HealthStatus | undefined): boolean {
  return health === HealthStatus.Current || health === HealthStatus.Failed;
}
