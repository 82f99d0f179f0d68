/**
 * The block naming the source in status.source, status.rendering and status.sync, as Config Sync
 * writes it: gitStatus, ociStatus or helmStatus, whichever the sync's sourceType reads.
 */
import { Defaults, SourceType } from "./defaults.ts";
import { redactUrl } from "./redact.ts";
import type { GitStatus, HelmStatus, OciStatus } from "./sync-status-types.ts";
import type { RSync } from "./sync-types.ts";

export type SourceStatusBlock =
  { readonly gitStatus: GitStatus } | { readonly ociStatus: OciStatus } | { readonly helmStatus: HelmStatus };

/**
 * `commit` is the pass's commit: for Helm it is the chart version actually rendered, which Config Sync
 * shows as helmStatus.version (spec.helm.version may be a range). Credentials in URLs are masked.
 */
export function sourceStatusBlock(sync: RSync, commit: string | undefined): SourceStatusBlock | undefined {
  const { git, oci, helm } = sync.spec;
  switch (sync.spec.sourceType ?? Defaults.sourceType) {
    case SourceType.Oci:
      return oci === undefined ? undefined : { ociStatus: { image: redactUrl(oci.image), dir: oci.dir ?? "." } };
    case SourceType.Helm:
      return helm === undefined
        ? undefined
        : { helmStatus: { repo: redactUrl(helm.repo), chart: helm.chart, version: commit ?? helm.version ?? "" } };
    default:
      return git === undefined
        ? undefined
        : {
            gitStatus: {
              repo: redactUrl(git.repo),
              revision: git.revision ?? Defaults.gitRevision,
              branch: git.branch ?? Defaults.gitBranch,
              dir: git.dir ?? Defaults.gitDir,
            },
          };
  }
}
