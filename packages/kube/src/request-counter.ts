/**
 * Counts this client's requests by Kubernetes verb, so metrics can export them and tests can
 * prove that a pass made no writes without asking the server.
 */

export const RequestVerbs = [
  "get",
  "list",
  "watch",
  "create",
  "update",
  "patch",
  "delete",
  "deletecollection",
] as const;
export type RequestVerb = (typeof RequestVerbs)[number];

export const WriteVerbs: ReadonlySet<RequestVerb> = new Set([
  "create",
  "update",
  "patch",
  "delete",
  "deletecollection",
]);

/**
 * Observes every completed request (for latency histograms). `status` is 0 without a response; `path` is the
 * request's path without its query (requestResource() names its resource).
 */
export type RequestListener = (verb: RequestVerb, status: number, durationMs: number, path: string) => void;

export interface RequestCounter {
  /** Requests sent with this verb since the client was made (retries count again). */
  count(verb: RequestVerb): number;
  /** All counts at once; diff two snapshots to measure one pass. */
  snapshot(): Readonly<Record<RequestVerb, number>>;
  /** create + update + patch + delete + deletecollection. */
  writes(): number;
  total(): number;
  /** Calls `listener` after each request finishes; returns the unsubscribe function. */
  onRequest(listener: RequestListener): () => void;
}

export class VerbCounter implements RequestCounter {
  readonly #counts: Record<RequestVerb, number> = {
    get: 0,
    list: 0,
    watch: 0,
    create: 0,
    update: 0,
    patch: 0,
    delete: 0,
    deletecollection: 0,
  };
  readonly #listeners = new Set<RequestListener>();

  started(verb: RequestVerb): void {
    this.#counts[verb] += 1;
  }

  finished(verb: RequestVerb, status: number, durationMs: number, path: string): void {
    const bare = path.split("?", 1)[0] ?? path;
    for (const listener of this.#listeners) listener(verb, status, durationMs, bare);
  }

  count(verb: RequestVerb): number {
    return this.#counts[verb];
  }

  snapshot(): Readonly<Record<RequestVerb, number>> {
    return { ...this.#counts };
  }

  writes(): number {
    let sum = 0;
    for (const verb of WriteVerbs) sum += this.#counts[verb];
    return sum;
  }

  total(): number {
    let sum = 0;
    for (const verb of RequestVerbs) sum += this.#counts[verb];
    return sum;
  }

  onRequest(listener: RequestListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

/** The verb the API server would record for a raw request. */
export function verbForMethod(method: string, watch: boolean): RequestVerb {
  switch (method.toUpperCase()) {
    case "POST":
      return "create";
    case "PUT":
      return "update";
    case "PATCH":
      return "patch";
    case "DELETE":
      return "delete";
    default:
      return watch ? "watch" : "get";
  }
}

// The namespace's own subresources, as the API server's request-info resolver reads the path.
const namespaceSubresources: ReadonlySet<string> = new Set(["status", "finalize"]);

/**
 * The resource an API path names, with its subresource (`deployments`, `reposyncs/status`), the way the API
 * server labels apiserver_request_total; a non-resource path (`/metrics`, `/openapi/v3`) is itself.
 */
export function requestResource(path: string): string {
  const parts = (path.split("?", 1)[0] ?? "").split("/").filter((p) => p !== "");
  let rest: string[];
  if (parts[0] === "api" && parts.length >= 2) rest = parts.slice(2);
  else if (parts[0] === "apis" && parts.length >= 3) rest = parts.slice(3);
  else rest = [];
  if (rest.length === 0) return `/${parts.join("/")}`;
  if (rest[0] === "namespaces" && rest.length > 2 && !namespaceSubresources.has(rest[2] ?? "")) rest = rest.slice(2);
  const [resource = "", , subresource] = rest;
  return subresource === undefined ? resource : `${resource}/${subresource}`;
}
