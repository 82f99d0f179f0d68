import { getHeapStatistics } from "node:v8";

/** The process's memory in MiB, for log lines: operators watch it, and the benchmarks read it. */
export function memoryMiB(): Readonly<Record<string, number>> {
  const m = process.memoryUsage();
  const mib = (bytes: number): number => Math.round(bytes / 1048576);
  return {
    rss: mib(m.rss),
    // The high-water mark since the process started (maxRSS is in KiB): what a memory limit must hold.
    peakRss: Math.round(process.resourceUsage().maxRSS / 1024),
    heapUsed: mib(m.heapUsed),
    heapTotal: mib(m.heapTotal),
    external: mib(m.external),
    arrayBuffers: mib(m.arrayBuffers),
  };
}

/** V8's gc() as `--expose-gc` installs it; its options pick the collection, whether to wait, and how hard. */
type ExposedGc = (options: {
  readonly type: "major" | "minor";
  readonly execution: "sync" | "async";
  readonly flavor?: "regular" | "last-resort";
}) => unknown;

/** Below this much heap in use, a pass's garbage is a few MiB and V8's own schedule is good enough. */
const collectFromHeapBytes = 32 * 1048576;

/** What collectAfterPass asked V8 for. */
export type CollectionAfterPass = "none" | "reduce" | "major";

/**
 * For the end of a full pass, when the process has `--expose-gc` (the reconciler's Node flags,
 * node-flags.ts); a no-op otherwise. The collection runs in a task of its own after the pass.
 *
 * A large sync (heap ≥ 32 MiB) gets a major collection: what a pass allocates outlives the young
 * generation's scavenges while the pass awaits, so it lands in the old generation, which V8 collects
 * only once it has grown by its growing factor (up to twice what is live). Back-to-back passes over
 * 10,000 objects took RSS from ~131 to ~150 MiB that way; collected after each pass it stays at ~135.
 *
 * A small sync (a manager runs many, idle) gets V8's memory-reducing collection ("last-resort"):
 * only that one shrinks the young generation back from the 2 × 4 MiB start-up grew it to and hands
 * emptied pages to the kernel; a regular one leaves them pooled. V8's memory reducer does the same
 * on its own, but only after a minute or two of quiet. On a heap this small it takes milliseconds.
 */
export function collectAfterPass(minHeapBytes = collectFromHeapBytes): CollectionAfterPass {
  const gc = (globalThis as { gc?: ExposedGc }).gc;
  if (gc === undefined) return "none";
  const large = getHeapStatistics().used_heap_size >= minHeapBytes;
  const options = large
    ? ({ type: "major", execution: "async" } as const)
    : ({ type: "major", execution: "async", flavor: "last-resort" } as const);
  void Promise.resolve(gc(options)).catch(() => undefined);
  return large ? "major" : "reduce";
}
