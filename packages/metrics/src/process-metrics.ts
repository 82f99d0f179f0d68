/** Node's process metrics (prom-client's process_* and nodejs_*), as both processes export them. */
import { collectDefaultMetrics, type Registry } from "prom-client";

/**
 * prom-client's defaults, less `nodejs_active_requests{type}`: a per-type breakdown with no series
 * at all while no libuv request is in flight (most scrapes). `nodejs_active_requests_total` stays.
 */
export function collectProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry });
  registry.removeSingleMetric("nodejs_active_requests");
}
