/**
 * Capped exponential backoff with jitter, for restarting a crashed reconciler and for retrying a
 * broken watch. Jitter keeps a fleet of reconcilers that died together (a Redis restart, an API
 * server upgrade) from coming back in lockstep.
 */

export interface BackoffPolicy {
  /** Delay before the first retry. */
  readonly initialMs: number;
  /** Upper bound of any delay. */
  readonly maxMs: number;
  /** Growth per attempt (2 doubles). */
  readonly factor: number;
  /** Fraction of the delay that is randomised: 0.2 gives delays in [0.8d, d]. */
  readonly jitter: number;
}

export const DefaultRestartBackoff: BackoffPolicy = { initialMs: 1_000, maxMs: 60_000, factor: 2, jitter: 0.2 };

/** The delay before retry number `attempt` (1 for the first retry). */
export function backoffDelay(policy: BackoffPolicy, attempt: number, random: () => number = Math.random): number {
  const exponent = Math.max(0, Math.min(attempt - 1, 30));
  const base = Math.min(policy.maxMs, policy.initialMs * policy.factor ** exponent);
  return Math.round(base * (1 - policy.jitter * random()));
}

/** Counts consecutive failures; `reset()` after a success (or a long enough healthy run). */
export class Backoff {
  readonly #policy: BackoffPolicy;
  readonly #random: () => number;
  #attempt = 0;

  constructor(policy: BackoffPolicy, random: () => number = Math.random) {
    this.#policy = policy;
    this.#random = random;
  }

  /** Failures since the last reset. */
  get attempts(): number {
    return this.#attempt;
  }

  next(): number {
    this.#attempt++;
    return backoffDelay(this.#policy, this.#attempt, this.#random);
  }

  reset(): void {
    this.#attempt = 0;
  }
}
