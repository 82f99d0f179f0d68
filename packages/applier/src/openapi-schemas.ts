/**
 * Custom resources' schemas from the API server's OpenAPI v3 documents, for a reconciler that may not
 * read CRDs (a RepoSync's, whose grants are its namespace's) and for kinds no CRD defines (aggregated
 * APIs). `/openapi/v3` lists every group-version with a URL whose `hash` changes with its schema, then
 * `/openapi/v3/apis/<group>/<version>?hash=…` is read into the registry the PatchMaker reads.
 *
 * The server publishes a CRD's schema there about 1 s after the CRD is Established or changed
 * (docs/design/objectmatcher.md), so a reconciler that can read CRDs builds schemas from them instead
 * (cr-schemas.ts). The index is read again only when discovery changed (seen through the RestMapper),
 * after `indexTtlMs` or, at most every `missRetryMs`, when it lacks a group-version, and a document
 * only when its hash changed. A kind without a readable schema is compared as before (every list
 * atomic), said in a debug log; a document that fails to load after it once loaded keeps the schema it
 * had, so a transient error never starts a fight over others' list items.
 */
import type { KubeClient, RestMapper } from "@driftless/kube";
import { resolveKind, type CustomResourceSchemaRegistry } from "@driftless/objectmatcher";

export interface SchemaLog {
  debug(message: string, fields?: Readonly<Record<string, unknown>>): void;
}

export interface OpenApiSchemaLoaderOptions {
  readonly client: Pick<KubeClient, "request">;
  readonly registry: CustomResourceSchemaRegistry;
  /** Its discovery refreshes tell the loader to read the index again. */
  readonly mapper?: Pick<RestMapper, "mappings">;
  readonly log?: SchemaLog;
  /** Read the index again after this long even without a discovery change (default 5 min). */
  readonly indexTtlMs?: number;
  /** Read it again after this long when it lacks a group-version asked for (default 10 s). */
  readonly missRetryMs?: number;
}

interface Index {
  readonly urls: ReadonlyMap<string, string>;
  readonly readable: boolean;
  readonly readAt: number;
  readonly discovery: unknown;
}

export class OpenApiSchemaLoader {
  readonly #options: OpenApiSchemaLoaderOptions;
  #index: Promise<Index> | undefined;
  /** group-version → the document URL (with its hash) now in the registry. */
  readonly #loaded = new Map<string, string>();
  readonly #loading = new Map<string, Promise<void>>();
  /** `apiVersion Kind` already reported without a schema, so the debug log says it once. */
  readonly #reported = new Set<string>();

  constructor(options: OpenApiSchemaLoaderOptions) {
    this.#options = options;
  }

  /** The registry holds the current schema of `apiVersion`'s group-version, if the server has one. */
  async ensure(apiVersion: string, kind: string): Promise<void> {
    if (resolveKind(apiVersion, kind).builtIn) return;
    let index = await this.#currentIndex();
    // A CRD's document is published a moment after it is Established: one not listed yet is asked
    // for again, at most every `missRetryMs`.
    if (!index.urls.has(apiVersion) && performance.now() - index.readAt >= (this.#options.missRetryMs ?? 10_000))
      index = await this.#currentIndex(true);
    const url = index.urls.get(apiVersion);
    if (url === undefined) {
      // Keep a schema that loaded before: an index that failed to read says nothing new.
      if (!index.readable) return;
      return this.#unknown(apiVersion, kind, "no OpenAPI v3 document");
    }
    if (this.#loaded.get(apiVersion) !== url) {
      let loading = this.#loading.get(apiVersion);
      if (!loading) {
        loading = this.#load(apiVersion, url).finally(() => this.#loading.delete(apiVersion));
        this.#loading.set(apiVersion, loading);
      }
      await loading;
    }
    if (this.#options.registry.schemaFor(apiVersion, kind) === undefined)
      this.#unknown(apiVersion, kind, "not in its document");
  }

  /** The next `ensure` reads the index again. */
  invalidate(): void {
    this.#index = undefined;
  }

  async #currentIndex(force = false): Promise<Index> {
    const discovery = this.#options.mapper?.mappings();
    const pending = this.#index;
    if (pending) {
      const cached = await pending;
      const ttl = this.#options.indexTtlMs ?? 5 * 60_000;
      if (!force && cached.discovery === discovery && performance.now() - cached.readAt < ttl) return cached;
      if (this.#index !== pending) return this.#index ?? this.#currentIndex(); // another caller re-reads it
    }
    this.#index = this.#readIndex(discovery);
    return this.#index;
  }

  /** Never rejects: an unreadable index is an empty one, read again after the TTL or a discovery change. */
  async #readIndex(discovery: unknown): Promise<Index> {
    const urls = new Map<string, string>();
    let readable = true;
    try {
      const body = await this.#options.client.request<{ paths?: Record<string, { serverRelativeURL?: string }> }>({
        method: "GET",
        path: "/openapi/v3",
      });
      for (const [path, entry] of Object.entries(body?.paths ?? {})) {
        const url = entry.serverRelativeURL;
        if (typeof url !== "string") continue;
        if (path.startsWith("apis/")) urls.set(path.slice("apis/".length), url);
        else if (path === "api/v1") urls.set("v1", url);
      }
    } catch (error) {
      readable = false;
      this.#options.log?.debug("custom resource schemas: /openapi/v3 unreadable; their lists compare whole", {
        error: messageOf(error),
      });
    }
    return { urls, readable, readAt: performance.now(), discovery };
  }

  async #load(groupVersion: string, url: string): Promise<void> {
    try {
      const [path = url, query = ""] = url.split("?");
      const document = await this.#options.client.request({
        method: "GET",
        path,
        query: Object.fromEntries(new URLSearchParams(query)),
      });
      const kinds = this.#options.registry.setGroupVersion(groupVersion, document);
      this.#loaded.set(groupVersion, url);
      this.#options.log?.debug("custom resource schemas: read", { groupVersion, kinds });
    } catch (error) {
      this.#options.log?.debug("custom resource schemas: document unreadable; keeping what was known", {
        groupVersion,
        error: messageOf(error),
      });
    }
  }

  #unknown(apiVersion: string, kind: string, why: string): void {
    const key = `${apiVersion} ${kind}`;
    if (this.#reported.has(key)) return;
    this.#reported.add(key);
    this.#options.log?.debug("custom resource schema unknown: every list compares whole", { apiVersion, kind, why });
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
