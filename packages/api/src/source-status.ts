/**
 * The block naming the source in status.source, status.rendering and status.sync, as Config Sync
 * writes it: gitStatus, ociStatus or helmStatus, whichever the sync's sourceType reads.
 */
import { posix } from "node:path";
import { Defaults, SourceType } from "./defaults.ts";
import { redactUrl } from "./redact.ts";
import type { GitStatus, HelmStatus, OciStatus } from "./sync-status-types.ts";
import type { RSync } from "./sync-types.ts";

export type SourceStatusBlock =
  { readonly gitStatus: GitStatus } | { readonly ociStatus: OciStatus } | { readonly helmStatus: HelmStatus };

/**
 * helmStatus.version is spec.helm.version as written (a range stays a range, unset is `latest`), as
 * Config Sync writes it; the version rendered is the commit. Credentials in URLs are masked.
 */
export function sourceStatusBlock(sync: RSync): SourceStatusBlock | undefined {
  const { git, oci, helm } = sync.spec;
  switch (sync.spec.sourceType ?? Defaults.sourceType) {
    case SourceType.Oci:
      return oci === undefined
        ? undefined
        : { ociStatus: { image: redactUrl(oci.image), dir: relativeSourceDir(oci.dir) } };
    case SourceType.Helm:
      return helm === undefined
        ? undefined
        : { helmStatus: { repo: redactUrl(helm.repo), chart: helm.chart, version: helm.version || "latest" } };
    default:
      return git === undefined
        ? undefined
        : {
            gitStatus: {
              repo: redactUrl(git.repo),
              revision: git.revision ?? Defaults.gitRevision,
              branch: git.branch ?? Defaults.gitBranch,
              dir: relativeSourceDir(git.dir),
            },
          };
  }
}

/**
 * spec.git.dir or spec.oci.dir as Config Sync reads it and writes it on status: relative to the root
 * and cleaned (`/acme/` and `./acme//` are `acme`; the root is `.`), whatever form the spec gives it in.
 * A `..` that climbs out stays, for the caller to refuse.
 */
export function relativeSourceDir(dir: string | undefined): string {
  const cleaned = posix.normalize((dir ?? Defaults.gitDir).replace(/^\/+/, "") || ".");
  return cleaned.length > 1 ? cleaned.replace(/\/+$/, "") : cleaned;
}
