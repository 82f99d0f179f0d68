/**
 * A Helm chart or an OCI image is rarely laid out as a hierarchy, yet a RootSync without
 * spec.sourceFormat reads its source as one (Config Sync's default), and fails with KNV1017 for the
 * missing `system/` Repo. The message says what such sources usually need.
 */
import { KnvCode, SourceFormat, SourceType, type RSync } from "@driftless/api";
import { MissingRepoError, type SourceError, type SourceResult } from "@driftless/source";
import { sourceFormatOf } from "./source-options.ts";

export function withSourceFormatHint(sync: RSync, result: SourceResult): SourceResult {
  if (result.complete || !needsHint(sync)) return result;
  const [first, ...rest] = result.errors.map((e) => hinted(sync, e));
  return first === undefined ? result : { ...result, errors: [first, ...rest] };
}

function needsHint(sync: RSync): boolean {
  const type = sync.spec.sourceType;
  return (
    sync.kind === "RootSync" &&
    (type === SourceType.Helm || type === SourceType.Oci) &&
    sourceFormatOf(sync) === SourceFormat.Hierarchy
  );
}

function hinted(sync: RSync, error: SourceError): SourceError {
  if (error.code !== KnvCode.MissingRepo) return error;
  const source = sync.spec.sourceType === SourceType.Helm ? "a Helm chart" : "an OCI image";
  return new MissingRepoError(
    `${error.message}. This RootSync syncs ${source} and reads it as a hierarchy, the default when spec.sourceFormat is unset; Helm and OCI sources usually set spec.sourceFormat: unstructured`,
    { sourcePaths: error.sourcePaths, resources: error.resources, cause: error.cause },
  );
}
