/** Which spec field says how often the source is polled: spec.git.period, spec.oci.period or spec.helm.period. */
import { Defaults, SourceType } from "./defaults.ts";
import { parseDuration } from "./duration.ts";
import type { RootSyncSpec, RepoSyncSpec } from "./sync-types.ts";

/**
 * The period as written (a Go duration), or undefined for the 15 s default of Git and OCI. A zero
 * period means the source type's default, as Config Sync's GetPeriod reads it: `helm.period: 0s` is 1 h.
 */
export function sourcePeriodOf(spec: RootSyncSpec | RepoSyncSpec): string | undefined {
  switch (spec.sourceType ?? Defaults.sourceType) {
    case SourceType.Oci:
      return nonZero(spec.oci?.period);
    case SourceType.Helm:
      // Config Sync re-fetches a chart hourly unless told otherwise.
      return nonZero(spec.helm?.period) ?? Defaults.helmPeriod;
    default:
      return nonZero(spec.git?.period);
  }
}

/** A period that sets something: unset and zero durations (`0`, `0s`, `0m0s`) leave it to the default. */
function nonZero(period: string | undefined): string | undefined {
  return period === undefined || parseDuration(period) === 0 ? undefined : period;
}
