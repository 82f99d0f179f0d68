/** Which spec field says how often the source is polled: spec.git.period, spec.oci.period or spec.helm.period. */
import { Defaults, SourceType } from "./defaults.ts";
import type { RootSyncSpec, RepoSyncSpec } from "./sync-types.ts";

/** The period as written (a Go duration), or undefined for the source type's default. */
export function sourcePeriodOf(spec: RootSyncSpec | RepoSyncSpec): string | undefined {
  switch (spec.sourceType ?? Defaults.sourceType) {
    case SourceType.Oci:
      return spec.oci?.period;
    case SourceType.Helm:
      // Config Sync re-fetches a chart hourly unless told otherwise.
      return spec.helm?.period ?? Defaults.helmPeriod;
    default:
      return spec.git?.period;
  }
}
