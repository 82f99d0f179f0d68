import { setTimeout as delay } from "node:timers/promises";
import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import type { ApplyOptions } from "./apply-options.ts";
import { Operation, type ApplyOutcome } from "./apply-outcome.ts";
import type { DesiredObject } from "./desired.ts";
import { WaitHealth } from "./pod-controller-health.ts";
import { HealthStatus } from "./kstatus.ts";
import { describeId, idKey, objMetadataKey, type ObjectId } from "./object-id.ts";

/**
 * A dependency was applied but did not become Current in time (or turned Failed); its dependents wait for a
 * later pass. Worded as Config Sync's applier skips it, the dependency named by its cli-utils key
 * (`skipped apply of Pod, shop/b: dependency apply reconcile timeout: shop_a__Pod`), which users match on.
 */
export class DependencyNotReconciledError extends DriftlessError {
  constructor(desired: DesiredObject, dependency: ObjectId, health: HealthStatus) {
    const outcome = health === HealthStatus.Failed ? "failed" : "timeout";
    super({
      code: KnvCode.Apply,
      errorClass: ErrorClass.Retry,
      message: `skipped apply of ${describeId(desired.id)}: dependency apply reconcile ${outcome}: ${objMetadataKey(dependency)}`,
    });
  }
}

/** How a dependency's own apply ended when it stops its dependents, in cli-utils' words. */
export const DependencyActuation = {
  /** Its write was refused or failed. */
  Failed: "failed",
  /** It was not written: itself held by a dependency, or another sync's object. */
  Skipped: "skipped",
} as const;
export type DependencyActuation = (typeof DependencyActuation)[keyof typeof DependencyActuation];

export class DependencyNotAppliedError extends DriftlessError {
  constructor(desired: DesiredObject, dependency: ObjectId, actuation: DependencyActuation) {
    super({
      code: KnvCode.Apply,
      errorClass: ErrorClass.Retry,
      message: `skipped apply of ${describeId(desired.id)}: dependency apply actuation ${actuation}: ${objMetadataKey(dependency)}`,
    });
  }
}

/**
 * Waits, once per dependency however many objects name it, until the live copy of an applied object
 * is Current or Failed, or the reconcile timeout passes. Failed ends the wait as cli-utils' wait task
 * ends it (reconcile failed): its dependents are skipped at once, not after the timeout. Reads the live
 * state (a watch cache in the reconciler), so waiting costs no API requests.
 */
export class DependencyReadiness {
  readonly timeoutMs: number;
  readonly #options: ApplyOptions;
  readonly #applied = new Map<string, ApplyOutcome>();
  readonly #waits = new Map<string, Promise<HealthStatus>>();

  constructor(options: ApplyOptions) {
    this.#options = options;
    this.timeoutMs = options.reconcileTimeoutMs ?? 300_000;
  }

  applied(outcome: ApplyOutcome): void {
    this.#applied.set(idKey(outcome.desired.id), outcome);
  }

  /** The dependency's health once Current or Failed, or its last health when the timeout passed. */
  current(key: string): Promise<HealthStatus> {
    let wait = this.#waits.get(key);
    if (wait === undefined) {
      wait = this.#waitFor(key);
      this.#waits.set(key, wait);
    }
    return wait;
  }

  async #waitFor(key: string): Promise<HealthStatus> {
    const outcome = this.#applied.get(key);
    // Nothing was written for it (a dry run): nothing to wait for. A disabled one never gets here (plan).
    if (outcome === undefined || outcome.operation === Operation.Skipped) return HealthStatus.Current;
    let health = outcome.health ?? HealthStatus.Unknown;
    const mapping = outcome.mapping;
    const deadline = Date.now() + this.timeoutMs;
    const signal = this.#options.signal;
    const reader = new WaitHealth(this.#options.live, this.#options.client);
    const settled = (h: HealthStatus): boolean => h === HealthStatus.Current || h === HealthStatus.Failed;
    while (!settled(health) && mapping !== undefined && Date.now() < deadline && !signal?.aborted) {
      await delay(Math.min(this.#options.dependencyPollMs ?? 250, Math.max(0, deadline - Date.now())));
      const { id } = outcome.desired;
      health = (await reader.read(mapping, id.namespace, id.name)).wait;
    }
    return health;
  }
}
