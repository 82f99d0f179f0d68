import { setTimeout as delay } from "node:timers/promises";

export interface EventuallyOptions {
  readonly timeoutMs?: number;
  readonly intervalMs?: number;
  /** Says what was awaited, for the failure message. */
  readonly what?: string;
}

/**
 * Polls `probe` until it returns a value other than undefined/false, or fails with the last
 * error it threw. The one way tests wait: on a condition, never on a bare sleep.
 */
export async function eventually<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  options: EventuallyOptions = {},
): Promise<T> {
  // A whole reconcile pass or a process restart took over 30 s on a loaded 2-core CI machine; a longer
  // bound only makes a failing test take longer to say so.
  const timeoutMs = options.timeoutMs ?? 60_000;
  const intervalMs = options.intervalMs ?? 100;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? `: last error: ${lastError.message}` : "";
      throw new Error(`eventually: ${options.what ?? "condition"} not met within ${timeoutMs} ms${why}`, {
        cause: lastError,
      });
    }
    await delay(intervalMs);
  }
}
