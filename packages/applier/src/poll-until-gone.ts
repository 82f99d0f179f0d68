import { setTimeout as delay } from "node:timers/promises";

export interface PollUntilGoneOptions<T> {
  /** Those of `items` still there (what "there" means is the caller's: a uid, a deletionTimestamp). */
  readonly stillThere: (items: readonly T[]) => Promise<ReadonlySet<T>>;
  /** A performance.now() time. */
  readonly deadline: number;
  readonly signal?: AbortSignal | undefined;
  /** Called once, with what is still there after the first look, before waiting for it. */
  readonly onWait?: (waiting: readonly T[]) => void;
}

/**
 * Looks at deleted objects until all are gone, the deadline passes or the signal aborts, and answers those
 * still there. The pause doubles from 100 ms to 1 s: most finalizers end within a few hundred ms, a Namespace's
 * finalization may take seconds, and a long wait should not keep reading.
 */
export async function pollUntilGone<T>(items: readonly T[], options: PollUntilGoneOptions<T>): Promise<T[]> {
  let waiting = [...items];
  for (let pauseMs = 100, first = true; waiting.length > 0; pauseMs = Math.min(pauseMs * 2, 1_000), first = false) {
    const still = await options.stillThere(waiting);
    waiting = waiting.filter((item) => still.has(item));
    const left = options.deadline - performance.now();
    if (waiting.length === 0 || left <= 0 || options.signal?.aborted === true) break;
    if (first) options.onWait?.(waiting);
    await delay(Math.min(pauseMs, left), undefined, { signal: options.signal }).catch(() => undefined);
  }
  return waiting;
}
