/**
 * How many reconciler processes may be starting at once. A restarted manager (or 100 RepoSyncs
 * created together) would otherwise spawn every child in the same second: each loads its modules
 * and runs its first pass at once, and on a small node they all finish late together. Through the
 * gate, starts run `limit` at a time; a slot frees when the child says it is up, exits, or after
 * `maxHoldMs` (a child that hangs at start must not stall the others).
 */
export class StartGate {
  readonly limit: number;
  readonly #maxHoldMs: number;
  #inFlight = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(limit: number, maxHoldMs = 30_000) {
    this.limit = Math.max(1, limit);
    this.#maxHoldMs = maxHoldMs;
  }

  /** Resolves with the slot's release (idempotent) once a slot is free. */
  async acquire(): Promise<() => void> {
    if (this.#inFlight >= this.limit) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#inFlight++;
    let released = false;
    const timer = setTimeout(() => release(), this.#maxHoldMs);
    timer.unref();
    const release = (): void => {
      if (released) return;
      released = true;
      clearTimeout(timer);
      // The slot passes straight to the next waiter, so #inFlight stays as it is.
      const next = this.#waiting.shift();
      if (next !== undefined) next();
      else this.#inFlight--;
    };
    return release;
  }

  get inFlight(): number {
    return this.#inFlight;
  }
}
