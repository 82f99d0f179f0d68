/**
 * Turns classified errors into the `errors[]` + `errorSummary` pair written to RootSync/RepoSync
 * status, in Config Sync's shape. Every error is listed, as Config Sync lists them; only a status too
 * large for the API server keeps a half, a quarter... of each list (`denominator`), as Config Sync's
 * retries do, since a write that fails for size would hide every one of them.
 */
import type { DriftlessError, ErrorResource } from "./errors.ts";
import type { ConfigSyncError, ErrorSummary, ResourceRef } from "./sync-status-types.ts";

/** Most errors a ReconcilerFinalizerFailure condition lists (one per object that would not go). */
export const MaxStatusErrors = 50;
/** Longest errorMessage written; longer messages have their body cut and marked, never the link. */
export const MaxErrorMessageLength = 4_096;
/** Most errorResources written for one error. */
export const MaxErrorResources = 20;

const truncationMark = " ... (truncated)";
/** Config Sync ends every KNV error with this and the code's number, lower-cased (its runbooks link there). */
const moreInformation = "For more information, see https://g.co/cloud/acm-errors#knv";

export interface StatusErrors {
  /** Absent (not []) when there are none, as Config Sync omits the field. */
  readonly errors?: readonly ConfigSyncError[];
  readonly errorSummary: ErrorSummary;
}

export interface StatusErrorOptions {
  /** Most errors listed (all by default); the summary still counts every one. */
  readonly maxErrors?: number;
  /**
   * Config Sync's truncation: the first 1/denominator of the errors are listed, `truncated` once it is
   * above 1 (each retry of a status the API server refuses for size doubles it).
   */
  readonly denominator?: number;
  readonly maxMessageLength?: number;
  /** An error resource's `sourcePath` as status shows it (Config Sync's: from the repository root). */
  readonly sourcePathOf?: (resource: ErrorResource) => string;
}

/** `KNV2009` → `2009`: status carries the bare number in `code`. */
export function knvNumber(code: string): string {
  return code.startsWith("KNV") ? code.slice(3) : code;
}

/**
 * An error as Config Sync prints it, in status and in `nomos vet`: `KNVxxxx: body`, a blank line, and
 * the link to the code's documentation. A code that is not KNV gets no link.
 */
export function knvErrorText(code: string, body: string): string {
  return `${code}: ${body}${linkOf(code)}`;
}

/** One error as Config Sync writes it: code number, `KNVxxxx: message` with its link, and the objects concerned. */
export function toConfigSyncError(
  error: DriftlessError,
  maxMessageLength: number = MaxErrorMessageLength,
  sourcePathOf?: (resource: ErrorResource) => string,
): ConfigSyncError {
  const named = error.resources
    .slice(0, MaxErrorResources)
    .map((resource) => ({ resource, sourcePath: sourcePathOf?.(resource) ?? resource.sourcePath }));
  const message = boundedText(error.code, error.message + resourceBlocks(named), maxMessageLength);
  const resources = named.map(({ resource, sourcePath }) => toResourceRef(resource, sourcePath));
  return resources.length === 0
    ? { code: knvNumber(error.code), errorMessage: message }
    : { code: knvNumber(error.code), errorMessage: message, errorResources: resources };
}

/**
 * The errors (in the given order, after dropping exact duplicates, which a retrying loop tends to
 * produce), cut to `maxErrors` or to 1/denominator of them, and a summary of how many there were in all.
 */
export function statusErrors(errors: readonly DriftlessError[], options: StatusErrorOptions = {}): StatusErrors {
  const denominator = Math.max(1, options.denominator ?? 1);
  const seen = new Set<string>();
  const unique: ConfigSyncError[] = [];
  for (const error of errors) {
    const converted = toConfigSyncError(error, options.maxMessageLength, options.sourcePathOf);
    const key = JSON.stringify(converted);
    if (seen.has(key)) continue;
    seen.add(key);
    unique.push(converted);
  }
  const maxErrors = Math.min(options.maxErrors ?? Infinity, Math.floor(unique.length / denominator));
  const kept = unique.slice(0, Math.max(0, maxErrors));
  const errorSummary = summaryOf(unique.length, kept.length < unique.length, kept.length);
  return kept.length === 0 ? { errorSummary } : { errors: kept, errorSummary };
}

/**
 * Written as Config Sync's Go type marshals it (every field `omitempty`): `{}` for no errors, and `truncated`
 * only when true, so a status reads the same whichever of the two wrote it.
 */
function summaryOf(totalCount: number, truncated: boolean, errorCountAfterTruncation: number): ErrorSummary {
  return {
    ...(totalCount === 0 ? {} : { totalCount }),
    ...(truncated ? { truncated } : {}),
    ...(errorCountAfterTruncation === 0 ? {} : { errorCountAfterTruncation }),
  };
}

/** A summary for errors that live elsewhere (the Syncing condition counts source+rendering+sync). */
export function combineSummaries(summaries: readonly (ErrorSummary | undefined)[]): ErrorSummary {
  let totalCount = 0;
  let errorCountAfterTruncation = 0;
  let truncated = false;
  for (const summary of summaries) {
    totalCount += summary?.totalCount ?? 0;
    errorCountAfterTruncation += summary?.errorCountAfterTruncation ?? 0;
    truncated ||= summary?.truncated ?? false;
  }
  return summaryOf(totalCount, truncated, errorCountAfterTruncation);
}

/** `KNVxxxx: body` and its link in at most `max` characters: only the body is cut, the code and link stay whole. */
function boundedText(code: string, body: string, max: number): string {
  const frame = knvErrorText(code, "").length;
  return knvErrorText(code, truncate(body, max - frame));
}

/**
 * The objects an error names, printed after its message as Config Sync's resource errors print them
 * (status.PrintResource: a blank line, then file, namespace, name and type a line each; several sorted and
 * blank-line separated), so the errorMessage names each object as its errorResources do.
 */
function resourceBlocks(named: readonly { resource: ErrorResource; sourcePath: string | undefined }[]): string {
  if (named.length === 0) return "";
  const blocks = named.map(({ resource, sourcePath }) => printResource(resource, sourcePath)).sort();
  return `\n\n${blocks.join("\n\n")}`;
}

function printResource(resource: ErrorResource, sourcePath: string | undefined): string {
  const lines: string[] = [];
  if (sourcePath !== undefined && sourcePath !== "") lines.push(`source: ${sourcePath}`);
  if (resource.namespace !== undefined && resource.namespace !== "") lines.push(`namespace: ${resource.namespace}`);
  // Config Sync's spacing: no space after an empty name's or the core group's colon, always one after version's.
  lines.push(`metadata.name:${resource.name === "" ? "" : ` ${resource.name}`}`);
  lines.push(`group:${resource.group === "" ? "" : ` ${resource.group}`}`);
  lines.push(`version: ${resource.version ?? ""}`);
  lines.push(`kind: ${resource.kind}`);
  return lines.join("\n");
}

function toResourceRef(resource: ErrorResource, sourcePath: string | undefined): ResourceRef {
  return {
    ...(sourcePath === undefined || sourcePath === "" ? {} : { sourcePath }),
    ...(resource.name === "" ? {} : { name: resource.name }),
    ...(resource.namespace === undefined || resource.namespace === "" ? {} : { namespace: resource.namespace }),
    gvk: { group: resource.group, version: resource.version ?? "", kind: resource.kind },
  };
}

function linkOf(code: string): string {
  return /^KNV\d+$/.test(code) ? `\n\n${moreInformation}${knvNumber(code)}` : "";
}

function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  return text.slice(0, Math.max(0, max - truncationMark.length)) + truncationMark;
}

/** Config Sync's SetStalled summary: one error, whatever the stall's error holds. */
export const StalledErrorSummary: ErrorSummary = { totalCount: 1, errorCountAfterTruncation: 1 };

/**
 * A Stalled condition's message, Config Sync's `err.Error()`: one error's text (`KNVxxxx: body` and its
 * link), or several as its status.MultiError prints them (FormatMultiLine: a count, then each text
 * numbered, sorted and without duplicates). Each body is bounded as in `errors[]`.
 */
export function stalledMessage(errors: readonly DriftlessError[]): string {
  // The message alone: the manager's setup failures are plain errors in Config Sync, printing no object.
  const texts = [...new Set(errors.map((e) => boundedText(e.code, e.message, MaxErrorMessageLength)))].sort();
  if (texts.length === 1) return texts[0] ?? "";
  const numbered = texts.map((text, i) => `[${i + 1}] ${text}\n`);
  return [`${texts.length} error(s)\n`, ...numbered].join("\n\n");
}
