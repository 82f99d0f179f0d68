/**
 * What of `spec.override` the manager hands its reconciler at start, as Config Sync's
 * reconciler-manager does with flags: the API server request timeout and the log level. A spec
 * change restarts the reconciler (spec-hash.ts), so a new value takes effect with the next process.
 */
import { apiServerTimeoutOverride, type RSync } from "@driftless/api";
import { containerVerbosity, ReconcilerContainer } from "./container-overrides.ts";

export { ReconcilerContainer };

export type ReconcilerLogLevel = "debug" | "info" | "warn" | "error";

export interface ReconcilerOverrides {
  /** `override.apiServerTimeout` as given (`15s`); undefined (unset or zero): the reconciler's default. */
  readonly apiServerTimeout?: string;
  /** From `override.logLevels` for the reconciler and the containers whose work it does; undefined: the manager's level. */
  readonly logLevel?: ReconcilerLogLevel;
}

/**
 * Config Sync's levels are klog verbosities (0–10, default 0 for its reconciler). Kubernetes' logging
 * conventions put debug output at 4 and above; below that driftless logs at info.
 */
const debugVerbosity = 4;

export function reconcilerOverrides(sync: RSync): ReconcilerOverrides {
  const override = sync.spec.override ?? undefined;
  // Zero means the default, as Config Sync reads it: the reconciler would refuse a 0 s deadline.
  const timeout = apiServerTimeoutOverride(override);
  const logLevel = logLevelOf(containerVerbosity(sync, ReconcilerContainer));
  return {
    ...(timeout === undefined ? {} : { apiServerTimeout: timeout }),
    ...(logLevel === undefined ? {} : { logLevel }),
  };
}

/** A klog verbosity as a driftless log level; undefined stays undefined (no override). */
export function logLevelOf(verbosity: number | undefined): ReconcilerLogLevel | undefined {
  if (verbosity === undefined) return undefined;
  return verbosity >= debugVerbosity ? "debug" : "info";
}

/** The overrides as reconciler flags (process mode). */
export function overrideArgs(overrides: ReconcilerOverrides): string[] {
  return overrides.apiServerTimeout === undefined ? [] : ["--api-server-timeout", overrides.apiServerTimeout];
}

/** The overrides as container environment (deployment mode); LOG_LEVEL is the caller's, replaced here. */
export function overrideEnv(overrides: ReconcilerOverrides): { name: string; value: string }[] {
  return overrides.apiServerTimeout === undefined
    ? []
    : [{ name: "API_SERVER_TIMEOUT", value: overrides.apiServerTimeout }];
}
