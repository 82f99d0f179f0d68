/** Exponential backoff with jitter, for reconnecting watches without a thundering herd. */

export interface BackoffOptions {
  readonly initialMs: number;
  readonly maxMs: number;
}

export class Backoff {
  readonly #initialMs: number;
  readonly #maxMs: number;
  readonly #random: () => number;
  #attempt = 0;

  constructor(options: BackoffOptions, random: () => number = Math.random) {
    this.#initialMs = options.initialMs;
    this.#maxMs = Math.max(options.maxMs, options.initialMs);
    this.#random = random;
  }

  /** The next delay: initial × 2^attempt, capped, scaled by a random factor in [0.5, 1]. */
  next(): number {
    const base = Math.min(this.#maxMs, this.#initialMs * 2 ** Math.min(this.#attempt, 30));
    this.#attempt += 1;
    return Math.round(base * (0.5 + this.#random() / 2));
  }

  reset(): void {
    this.#attempt = 0;
  }

  get attempts(): number {
    return this.#attempt;
  }
}
