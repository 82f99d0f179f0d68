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

/** V8's gc() as `--expose-gc` installs it; its options pick the collection and whether to wait. */
type ExposedGc = (options: { readonly type: "major" | "minor"; readonly execution: "sync" | "async" }) => unknown;

/** Below this much heap in use, a pass's garbage is a few MiB and V8's own schedule is good enough. */
const collectFromHeapBytes = 32 * 1048576;

/**
 * Starts a major collection that runs alongside the process (incremental marking), when the process
 * has `--expose-gc` (the reconciler's Node flags, node-flags.ts) and holds a large sync; a no-op
 * otherwise. For the end of a full pass: what a pass allocates outlives the young generation's
 * scavenges while the pass awaits, so it lands in the old generation, which V8 collects only once it
 * has grown by its growing factor (up to twice what is live). Back-to-back passes over 10,000 objects
 * took RSS from ~131 to ~150 MiB that way; collected after each pass it stays at ~135
 * (docs/benchmarks.md). Small syncs (a manager runs many) are left to V8: a collection would cost them
 * CPU for nothing.
 */
export function collectAfterPass(minHeapBytes = collectFromHeapBytes): boolean {
  const gc = (globalThis as { gc?: ExposedGc }).gc;
  if (gc === undefined || getHeapStatistics().used_heap_size < minHeapBytes) return false;
  void Promise.resolve(gc({ type: "major", execution: "async" })).catch(() => undefined);
  return true;
}
