/**
 * What the API server itself counted: `apiserver_request_total` from its /metrics, summed by
 * verb. It counts every client, so it proves what no client did (tests: "this pass made zero
 * writes to configmaps"); our own RequestCounter says what this process did.
 */
import type { KubeClient } from "./client.ts";
import { parseSamples, type Sample } from "./prometheus-text.ts";

/**
 * Verb labels as the server reports them: GET, LIST, WATCH, POST, PUT, PATCH, APPLY (a
 * server-side apply patch), DELETE, DELETECOLLECTION, CONNECT.
 */
export const apiserverWriteVerbs: ReadonlySet<string> = new Set([
  "POST",
  "PUT",
  "PATCH",
  "APPLY",
  "DELETE",
  "DELETECOLLECTION",
]);

/**
 * Label filters; each one given must match exactly. The metric has no namespace label, so
 * writes cannot be attributed to a namespace: filter by resource (and group) instead.
 */
export interface ApiserverMetricsFilter {
  readonly group?: string;
  readonly version?: string;
  readonly resource?: string;
  /** "" for the object itself, "status" for the status subresource. */
  readonly subresource?: string;
  /** "cluster", "namespace" or "resource". */
  readonly scope?: string;
  /** By default dry-run requests are counted too; false leaves them out. */
  readonly includeDryRun?: boolean;
  /** Only responses with an HTTP code this accepts (e.g. `(c) => c < 400` for writes that happened). */
  readonly code?: (code: number) => boolean;
}

export interface ApiserverRequestCounts {
  /** Sums by the metric's verb label (upper case, as the server reports it). */
  readonly byVerb: Readonly<Record<string, number>>;
  /** POST + PUT + PATCH + APPLY + DELETE + DELETECOLLECTION. */
  readonly writes: number;
  readonly total: number;
}

/** Reads kube-apiserver's /metrics and sums `apiserver_request_total` by verb. */
export async function apiserverMetrics(
  client: KubeClient,
  filter: ApiserverMetricsFilter = {},
  signal?: AbortSignal,
): Promise<ApiserverRequestCounts> {
  const raw = await client.requestRaw({
    method: "GET",
    path: "/metrics",
    accept: "text/plain",
    ...(signal === undefined ? {} : { signal }),
  });
  return sumRequests(parseSamples(raw.body.toString("utf8"), "apiserver_request_total"), filter);
}

export function sumRequests(samples: readonly Sample[], filter: ApiserverMetricsFilter = {}): ApiserverRequestCounts {
  const byVerb: Record<string, number> = {};
  let writes = 0;
  let total = 0;
  for (const { labels, value } of samples) {
    if (filter.group !== undefined && labels["group"] !== filter.group) continue;
    if (filter.version !== undefined && labels["version"] !== filter.version) continue;
    if (filter.resource !== undefined && labels["resource"] !== filter.resource) continue;
    if (filter.subresource !== undefined && labels["subresource"] !== filter.subresource) continue;
    if (filter.scope !== undefined && labels["scope"] !== filter.scope) continue;
    if (filter.includeDryRun === false && (labels["dry_run"] ?? "") !== "") continue;
    if (filter.code !== undefined && !filter.code(Number(labels["code"]))) continue;
    const verb = labels["verb"] ?? "";
    byVerb[verb] = (byVerb[verb] ?? 0) + value;
    total += value;
    if (apiserverWriteVerbs.has(verb)) writes += value;
  }
  return { byVerb, writes, total };
}
