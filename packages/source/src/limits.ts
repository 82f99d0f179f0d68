/**
 * Bounds on what a source may ask of the reader, so that one file cannot exhaust a reconciler
 * (docs/design/reconciler.md, "Bounded input", gives the reasons and the figures).
 */
export const SourceLimits = {
  /**
   * Deepest nesting of mappings and lists in one document (a scalar is 0 deep, `{}` is 1). The
   * deepest manifests in Config Sync's repository (CRD schemas) nest 35 levels; the YAML library's own
   * recursion gives out near 900.
   */
  maxDepth: 100,
  /**
   * Characters YAML aliases may add to one file once expanded (every key and string counts its
   * length, any other value 1). A Kubernetes object is at most ~1.5 MiB, and aliases that only
   * de-duplicate a manifest add kilobytes; 99 aliases of a 1.1 MB value would add ~110 MB.
   */
  maxAliasCharsPerFile: 1 << 20,
  /** The same, summed over a source's files in path order. */
  maxAliasCharsPerSource: 32 << 20,
} as const;

/** `1 MiB` for messages. */
export function formatChars(chars: number): string {
  return chars >= 1 << 20 ? `${Math.round((chars / (1 << 20)) * 10) / 10} MiB` : `${Math.ceil(chars / 1024)} KiB`;
}
