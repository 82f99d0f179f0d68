/**
 * The log line about objects that carry this sync's ApplySet label without being declared by it: one
 * when their count changes, at most one a minute, so a tenant creating and deleting forged objects
 * between passes cannot flood the reconciler's log. The gauge (driftless_watch_undeclared_objects)
 * carries every pass's count.
 */

/** Above this many undeclared objects the line is a warning: more than a stray leftover, likely a forged label. */
export const undeclaredWarnAbove = 100;

/** Lines, at most one in this long; a change within it is logged by the first pass after it. */
export const undeclaredLogIntervalMs = 60_000;

export interface UndeclaredLine {
  readonly level: "warn" | "info";
  readonly message: string;
  readonly fields: { readonly undeclared: number; readonly types: Readonly<Record<string, number>> };
}

export class UndeclaredReport {
  /** The counts the last line reported (nothing undeclared until one did). */
  private reported = "{}";
  private reportedAt = -Infinity;
  private readonly now: () => number;

  constructor(now: () => number = () => performance.now()) {
    this.now = now;
  }

  /** The line a pass logs for these counts by type, if any. */
  next(counts: ReadonlyMap<string, number>): UndeclaredLine | undefined {
    const types = Object.fromEntries([...counts].filter(([, n]) => n > 0).sort(([a], [b]) => a.localeCompare(b)));
    const signature = JSON.stringify(types);
    if (signature === this.reported) return undefined;
    const now = this.now();
    if (now - this.reportedAt < undeclaredLogIntervalMs) return undefined;
    this.reported = signature;
    this.reportedAt = now;
    const undeclared = Object.values(types).reduce((sum, n) => sum + n, 0);
    return {
      level: undeclared > undeclaredWarnAbove ? "warn" : "info",
      message:
        undeclared === 0
          ? "watch cache: no object carries this sync's ApplySet label without being declared by it any more"
          : "watch cache: objects carry this sync's ApplySet label but are not declared by it (a forged label?); counted, not cached",
      fields: { undeclared, types },
    };
  }
}
