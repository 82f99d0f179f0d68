import { printable, printableJson, printableLine, printableYaml } from "../terminal-text.ts";
import { SyncState, type SyncReport } from "../sync-report.ts";

export const OutputFormat = { Text: "text", Json: "json", Yaml: "yaml" } as const;
export type OutputFormat = (typeof OutputFormat)[keyof typeof OutputFormat];

/** As wide as the longest state (RECONCILING), so SUSPENDED and RECONCILING rows keep the columns. */
const stateWidth = Math.max(...Object.values(SyncState).map((s) => s.length));
const header = `${"KIND".padEnd(8)} ${"NAMESPACE/NAME".padEnd(48)} ${"STATE".padEnd(stateWidth)} ${"COMMIT".padEnd(12)} ERRORS`;

const short = (commit: string): string => commit.slice(0, 12) || "-";

/** Where a sync's detail values begin ("  source:    "): the continuation lines of any field start here. */
export const continuationIndent = " ".repeat(13);

/**
 * A message from the cluster (a condition's, an error's) that may hold newlines (printable() keeps them;
 * a carriage return it escapes): its further lines are
 * indented past every column a row (0), a sync's detail (2) or an object (4) starts at, so tenant text
 * cannot print a line that reads as another sync or another error.
 */
export function cell(text: string): string {
  return text.replaceAll("\n", `\n${continuationIndent}`);
}

/** The summary line of one sync (the line `driftless status` has always printed); names and commits keep to it. */
export function statusLine(r: SyncReport): string {
  const message = r.stalled?.message ?? r.message;
  return `${printableLine(r.kind).padEnd(8)} ${printableLine(`${r.namespace}/${r.name}`).padEnd(48)} ${r.state.padEnd(stateWidth)} ${printableLine(short(shownCommit(r))).padEnd(12)} ${r.errorCount} error(s)${message ? `  ${cell(message)}` : ""}`;
}

/** The commit `nomos status` shows: the Syncing condition's (a failed one's too), none while stalled or reconciling. */
function shownCommit(r: SyncReport): string {
  return r.state === SyncState.Stalled || r.state === SyncState.Reconciling ? "" : r.commits.syncing;
}

/** A sync as a person reads it: the summary line, then its source, commits, stall, errors and objects. */
export function syncLines(r: SyncReport): string[] {
  const lines = [
    statusLine(r),
    `  source:    ${printableLine(r.source.display)}`,
    printableLine(
      `  commits:   source ${short(r.commits.source)}  rendering ${short(r.commits.rendering)}  sync ${short(r.commits.sync)}`,
    ),
  ];
  if (r.stalled !== undefined) lines.push(cell(`  stalled:   ${r.stalled.reason}: ${r.stalled.message}`));
  for (const e of r.errors) lines.push(cell(`  error:     ${e.code ? `${e.code} ` : ""}(${e.phase}) ${e.message}`));
  if (r.errorCount > r.errors.length) lines.push(`  error:     ... ${r.errorCount - r.errors.length} more`);
  if (r.resources !== undefined) {
    lines.push(`  resources: ${r.resources.length}`);
    for (const o of r.resources) {
      const kind = o.group ? `${o.group}/${o.kind}` : o.kind;
      lines.push(printableLine(`    ${o.status.padEnd(12)} ${kind} ${o.namespace ? `${o.namespace}/` : ""}${o.name}`));
      // As nomos status: each condition's message under its object (OwnershipOverlap names the owner).
      for (const c of o.conditions ?? []) if (c.message) lines.push(cell(`${" ".repeat(17)}${c.message}`));
    }
  }
  return lines;
}

/** The `--namespace` and `--name` a view was asked for: what an empty one says it looked for. */
export interface ViewFilter {
  readonly namespace?: string;
  readonly name?: string;
}

/**
 * What an empty text view says instead of a bare header, in nomos's words ("No RootSync resources found"),
 * with the filters that left nothing, so an empty cluster is told from an empty table.
 */
export function noSyncsLine(filter: ViewFilter = {}): string {
  const where = filter.namespace === undefined ? "" : ` in namespace ${JSON.stringify(filter.namespace)}`;
  const which = filter.name === undefined ? "" : ` named ${JSON.stringify(filter.name)}`;
  return printableLine(`No RootSync or RepoSync resources found${which}${where}`);
}

/**
 * The whole view, as one string, with no terminal control characters from the cluster's text. JSON and YAML
 * print `{ syncs: [...] }` (see SyncReport for the fields), empty when there is none.
 */
export function render(reports: readonly SyncReport[], format: OutputFormat, filter?: ViewFilter): string {
  switch (format) {
    case OutputFormat.Json:
      return `${printableJson(JSON.stringify({ syncs: reports }, null, 2))}\n`;
    case OutputFormat.Yaml:
      return printableYaml({ syncs: reports });
    case OutputFormat.Text:
      if (reports.length === 0) return `${noSyncsLine(filter)}\n`;
      return `${printable([header, ...reports.flatMap(syncLines)].join("\n"))}\n`;
  }
}
