/**
 * KNV2009 for applied objects that did not become Current within override.reconcileTimeout, kept
 * while they stay so: a later pass that leaves such an object unchanged does not wait for it again
 * (one stuck Deployment must not hold every resync), yet still reports it until it is Current or Failed.
 */
import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import { describeId, HealthStatus, idKey, Operation, type ApplyOutcome } from "@driftless/applier";

export class ReconcileTimeoutError extends DriftlessError {
  constructor(outcome: ApplyOutcome, timeoutMs: number) {
    const { desired } = outcome;
    super({
      code: KnvCode.Apply,
      // Retried with backoff: the retry reports it again without waiting, or clears it once Current.
      errorClass: ErrorClass.Retry,
      message: `failed to wait for ${describeId(desired.id)}: reconcile timeout: not Current within ${Math.round(timeoutMs / 1000)} s (override.reconcileTimeout); its status is ${outcome.health ?? HealthStatus.Unknown}`,
    });
  }
}

export class ReconcileTimeouts {
  /** Keys of objects whose wait timed out and that have not been seen Current or Failed since. */
  readonly #stuck = new Set<string>();
  #reported = false;

  /**
   * No wait has been reported on yet: what a former reconciler timed out on is not known here, so the pass
   * waits for what it left unchanged too (once, as Config Sync's new reconciler pod waits for everything).
   */
  get waitsForUnchanged(): boolean {
    return !this.#reported;
  }

  /** The errors of this pass: what timed out now, and what timed out before and is still not reconciled. */
  errors(applied: readonly ApplyOutcome[], timedOut: readonly ApplyOutcome[], timeoutMs: number): DriftlessError[] {
    const now = new Set(timedOut.map((o) => idKey(o.desired.id)));
    const stuck: ApplyOutcome[] = [];
    for (const outcome of applied) {
      const key = idKey(outcome.desired.id);
      const stillWaiting =
        this.#stuck.has(key) && outcome.operation === Operation.Unchanged && !reconciled(outcome.health);
      if (now.has(key) || stillWaiting) stuck.push(outcome);
    }
    this.#reported = true;
    this.#stuck.clear(); // objects no longer declared, or reconciled, are forgotten
    for (const outcome of stuck) this.#stuck.add(idKey(outcome.desired.id));
    return stuck.map((o) => new ReconcileTimeoutError(o, timeoutMs));
  }

  /** Keys (idKey) of the objects the last `errors` reported: their ResourceGroup entries say Timeout. */
  get stuck(): ReadonlySet<string> {
    return this.#stuck;
  }
}

function reconciled(health: HealthStatus | undefined): boolean {
  return health === HealthStatus.Current || health === HealthStatus.Failed;
}
