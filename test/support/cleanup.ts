/**
 * Clean-up that never throws. node:test runs a test's `after` hooks in the order they were added and stops at
 * the first that throws, so a failed removal (a process still writing there: ENOTEMPTY) skipped every later
 * hook, among them the ones that stop child processes, whose pipes then kept the test file running for good.
 */
import { rm } from "node:fs/promises";

/** Removes `path` (retrying while someone still writes there); a failure is reported on stderr, not thrown. */
export async function removeQuietly(path: string): Promise<void> {
  try {
    await rm(path, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  } catch (error) {
    process.stderr.write(`clean-up: could not remove ${path}: ${String(error)}\n`);
  }
}

/** Runs the clean-up `step`; a failure is reported on stderr, not thrown, so the test's later clean-up still runs. */
export async function quietly(what: string, step: () => Promise<unknown>): Promise<void> {
  try {
    await step();
  } catch (error) {
    process.stderr.write(`clean-up: ${what} failed: ${String(error)}\n`);
  }
}

/**
 * Runs `check` after every other after hook of the test, even those added later, so a failing check (it may
 * throw) skips no clean-up: a hook added while the hooks run goes to the end of the list.
 */
export function checkAfterCleanUp(t: { after(fn: () => unknown): void }, check: () => unknown): void {
  t.after(() => t.after(check));
}

/** Removes `path` after the test, without ever stopping the test's later clean-up. */
export function removeAfter(t: { after(fn: () => Promise<void>): void }, path: string): void {
  t.after(() => removeQuietly(path));
}
