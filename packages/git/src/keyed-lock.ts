/**
 * Runs tasks one at a time per key. Two fetches for the same sync share a cache repository and
 * worktree directory; git's own lock files make a concurrent second fetch fail rather than
 * corrupt, but failing a poll is still wrong, so callers queue instead.
 */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<void>>();

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const current = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => current);
    this.#tails.set(key, tail);
    try {
      await previous;
      return await task();
    } finally {
      release();
      // Forget the key once nobody is queued behind us, so the map does not grow per sync forever.
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }

  /** Keys with a running or queued task (for tests and diagnostics). */
  get activeKeys(): readonly string[] {
    return [...this.#tails.keys()];
  }
}
