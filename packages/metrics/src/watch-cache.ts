/** What a reconciler's watch caches leave out (driftless's own: Config Sync caches whatever its selector matches). */
import type { Registry } from "prom-client";
import { gauge, type GaugeHandle } from "./handles.ts";

export interface WatchCacheMetrics {
  /**
   * driftless_watch_undeclared_objects{type}: objects carrying this sync's ApplySet label that it does not
   * declare, by watched type (`Kind` or `Kind.group`; 0 for a type with none). Not cached, only counted.
   */
  readonly watchUndeclaredObjects: GaugeHandle<{ type: string }>;
}

export function watchCacheMetrics(registry: Registry, prefix: string): WatchCacheMetrics {
  return {
    watchUndeclaredObjects: gauge<{ type: string }>(registry, {
      name: `${prefix}watch_undeclared_objects`,
      help: "Objects carrying this sync's ApplySet label that it does not declare (a forged label), by type: counted, not cached",
      labelNames: ["type"],
    }),
  };
}
