/**
 * The timeouts of spec.override as Config Sync's getters read them (GetReconcileTimeout,
 * GetAPIServerTimeout): unset and zero (`0`, `0s`) both mean the default, never "no time at all".
 */
import { Defaults } from "./defaults.ts";
import { parseDuration } from "./duration.ts";
import type { OverrideSpec } from "./sync-types.ts";

type Timeouts = Pick<OverrideSpec, "reconcileTimeout" | "apiServerTimeout">;

/** override.reconcileTimeout in milliseconds; 5 min when unset or zero. */
export function reconcileTimeoutMsOf(override: Timeouts | null | undefined): number {
  return nonZeroMs(override?.reconcileTimeout) ?? Defaults.reconcileTimeoutMs;
}

/** override.apiServerTimeout as written when it sets one; undefined leaves the reconciler its 15 s default. */
export function apiServerTimeoutOverride(override: Timeouts | null | undefined): string | undefined {
  const text = override?.apiServerTimeout;
  return nonZeroMs(text) === undefined ? undefined : text;
}

function nonZeroMs(text: string | undefined): number | undefined {
  const ms = text === undefined ? undefined : parseDuration(text);
  return ms === undefined || ms === 0 ? undefined : ms;
}
