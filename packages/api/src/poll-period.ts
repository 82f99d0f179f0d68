/**
 * How often a reconciler polls its source, from spec.git.period: decided here once, so no value the
 * CRD accepts can stop a reconciler or have it poll the Git host back to back.
 */
import { Defaults } from "./defaults.ts";
import { parseDuration } from "./duration.ts";

export const PollPeriodBounds = {
  /** One `git ls-remote` a second at most. Config Sync passes `1ns` on to git-sync, which refuses < 10 ms and crash-loops. */
  minMs: 1_000,
  /** A Node timer longer than 2^31-1 ms (24.8 days) fires at once; a day is long for a fallback poll. */
  maxMs: 86_400_000,
} as const;

/**
 * Milliseconds between polls. Unset, unparsable and `0s` mean the default (15 s), as in Config Sync;
 * anything else is held between 1 s and 24 h.
 */
export function pollPeriodMs(period: string | undefined): number {
  const ms = period === undefined ? undefined : parseDuration(period);
  if (ms === undefined || ms === 0) return Defaults.periodMs;
  return Math.min(Math.max(ms, PollPeriodBounds.minMs), PollPeriodBounds.maxMs);
}
