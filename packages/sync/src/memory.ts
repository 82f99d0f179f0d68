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
