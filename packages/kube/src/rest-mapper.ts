/**
 * Kind → REST resource, from discovery. Lookups that miss refresh discovery (so CRDs created
 * after start are found), at most once per `minRefreshIntervalMs` however many callers miss.
 */
import { setTimeout as delay } from "node:timers/promises";
import { discover, type Discovery, type DiscoveryClient } from "./discovery.ts";
import { groupOf, versionOf } from "./paths.ts";
import type { ResourceMapping } from "./types.ts";

/** Whether a kind is served: `unknown` when the server's discovery of its group could not be read. */
export type KindAbsence =
  { readonly served: true } | { readonly served: false } | { readonly served: "unknown"; readonly why: string };

function isNotFoundStatus(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { status?: unknown }).status === 404;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export interface RestMapperOptions {
  /** Discovery after a miss runs at most this often (default 1000 ms). */
  readonly minRefreshIntervalMs?: number;
}

interface Index {
  /** "group/version/kind" → mapping. */
  readonly byGvk: ReadonlyMap<string, ResourceMapping>;
  /** "group/kind" → mappings, preferred version first. */
  readonly byGroupKind: ReadonlyMap<string, readonly ResourceMapping[]>;
  readonly all: readonly ResourceMapping[];
  readonly failed: readonly string[];
}

export class RestMapper {
  readonly #client: DiscoveryClient;
  readonly #minIntervalMs: number;
  #index: Index | undefined;
  #stale = true;
  #inflight: Promise<void> | undefined;
  #scheduled: Promise<void> | undefined;
  #lastStartedAt = Number.NEGATIVE_INFINITY;

  constructor(client: DiscoveryClient, options: RestMapperOptions = {}) {
    this.#client = client;
    this.#minIntervalMs = options.minRefreshIntervalMs ?? 1000;
  }

  /** Reads discovery now (joining a refresh already running). */
  refresh(): Promise<void> {
    this.#inflight ??= this.#load().finally(() => {
      this.#inflight = undefined;
    });
    return this.#inflight;
  }

  /** The next lookup reads discovery again, whatever the rate limit (e.g. after applying CRDs). */
  invalidate(): void {
    this.#stale = true;
  }

  async mappingFor(apiVersion: string, kind: string): Promise<ResourceMapping | undefined> {
    const key = `${groupOf(apiVersion)}/${versionOf(apiVersion)}/${kind}`;
    const hit = (await this.#current()).byGvk.get(key);
    if (hit !== undefined) return hit;
    await this.#refreshAfterMiss();
    return this.#index?.byGvk.get(key);
  }

  /**
   * The mapping if discovery (re-read when invalidated) already knows the kind; a miss reads nothing
   * more. For looking ahead, where the caller's own lookup later reports the miss.
   */
  async knownMappingFor(apiVersion: string, kind: string): Promise<ResourceMapping | undefined> {
    return (await this.#current()).byGvk.get(`${groupOf(apiVersion)}/${versionOf(apiVersion)}/${kind}`);
  }

  /** The mapping of the group's preferred version that serves `kind`. */
  async mappingForGroupKind(group: string, kind: string): Promise<ResourceMapping | undefined> {
    const key = `${group}/${kind}`;
    const hit = (await this.#current()).byGroupKind.get(key)?.[0];
    if (hit !== undefined) return hit;
    await this.#refreshAfterMiss();
    return this.#index?.byGroupKind.get(key)?.[0];
  }

  /** Every mapping known from the last discovery (empty before the first). */
  mappings(): readonly ResourceMapping[] {
    return this.#index?.all ?? [];
  }

  /**
   * Says, for a group and kind with no mapping, whether the server really does not serve it or
   * could not say: a group-version of the group whose discovery failed (an aggregated API that is
   * down, possibly left out of aggregated discovery altogether) makes the answer unknown, never
   * "absent". Asks the group's own discovery document, so costs requests only on a miss.
   */
  async kindAbsence(group: string, kind: string): Promise<KindAbsence> {
    if ((await this.mappingForGroupKind(group, kind)) !== undefined) return { served: true };
    const unreadable = this.failedGroupVersions().filter((gv) => groupOf(gv) === group);
    if (unreadable.length > 0) return { served: "unknown", why: `discovery of ${unreadable.join(", ")} failed` };
    if (group === "") return { served: false };
    let versions: string[];
    try {
      const doc = await this.#client.request<{ versions?: { version?: string }[] }>({
        method: "GET",
        path: `/apis/${encodeURIComponent(group)}`,
      });
      versions = (doc.versions ?? []).flatMap((v) => (v.version === undefined ? [] : [v.version]));
    } catch (error) {
      if (isNotFoundStatus(error)) return { served: false };
      return { served: "unknown", why: `discovery of ${group} failed: ${messageOf(error)}` };
    }
    for (const version of versions) {
      try {
        const list = await this.#client.request<{ resources?: { kind?: string; name?: string }[] }>({
          method: "GET",
          path: `/apis/${encodeURIComponent(group)}/${encodeURIComponent(version)}`,
        });
        if ((list.resources ?? []).some((r) => r.kind === kind && r.name?.includes("/") === false)) {
          this.invalidate(); // served after all: the index is behind
          return { served: true };
        }
      } catch (error) {
        return { served: "unknown", why: `discovery of ${group}/${version} failed: ${messageOf(error)}` };
      }
    }
    return { served: false };
  }

  /** Group-versions the last discovery could not read (their kinds look unknown until they recover). */
  failedGroupVersions(): readonly string[] {
    return this.#index?.failed ?? [];
  }

  async #current(): Promise<Index> {
    if (this.#index === undefined || this.#stale) await this.refresh();
    if (this.#index === undefined) throw new Error("discovery produced no index"); // refresh() throws first
    return this.#index;
  }

  async #refreshAfterMiss(): Promise<void> {
    if (this.#inflight !== undefined) return this.#inflight;
    const wait = this.#lastStartedAt + this.#minIntervalMs - performance.now();
    if (wait <= 0) return this.refresh();
    // Everyone who misses within the interval shares one refresh at its end.
    this.#scheduled ??= delay(wait).then(() => {
      this.#scheduled = undefined;
      return this.refresh();
    });
    return this.#scheduled;
  }

  async #load(): Promise<void> {
    this.#lastStartedAt = performance.now();
    // A lookup that arrives during the refresh sees the new index, so clear staleness up front;
    // if discovery fails, the old index stays and the next lookup tries again.
    this.#stale = false;
    try {
      this.#index = buildIndex(await discover(this.#client));
    } catch (error) {
      this.#stale = true;
      throw error;
    }
  }
}

function buildIndex(discovery: Discovery): Index {
  const byGvk = new Map<string, ResourceMapping>();
  const byGroupKind = new Map<string, ResourceMapping[]>();
  const all: ResourceMapping[] = [];
  for (const group of discovery.groups) {
    // Walk versions preferred first so that byGroupKind lists them in that order.
    for (const version of group.versions) {
      for (const m of group.resources) {
        if (m.version !== version) continue;
        const gvk = `${m.group}/${m.version}/${m.kind}`;
        // Several resources of one version may share a kind; the first listed is the primary one.
        if (byGvk.has(gvk)) continue;
        byGvk.set(gvk, m);
        all.push(m);
        const gk = `${m.group}/${m.kind}`;
        const list = byGroupKind.get(gk);
        if (list === undefined) byGroupKind.set(gk, [m]);
        else list.push(m);
      }
    }
  }
  return { byGvk, byGroupKind, all, failed: discovery.failed };
}
