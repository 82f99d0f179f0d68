/**
 * What the API server serves: every group, version and resource. Aggregated discovery
 * (apidiscovery.k8s.io/v2, GA in 1.30) answers in two requests (/api and /apis); older servers
 * get the legacy walk, one request per group-version.
 */
import type { KubeClient } from "./client.ts";
import { isRecord, stringField } from "./parse.ts";
import type { ResourceMapping } from "./types.ts";

export const aggregatedDiscoveryAccept =
  "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";

/** The two calls discovery makes (KubeClient has them). */
export type DiscoveryClient = Pick<KubeClient, "request" | "requestRaw">;

export interface DiscoveredGroup {
  /** "" for the core group. */
  readonly name: string;
  /** Served versions, preferred first. */
  readonly versions: readonly string[];
  /** Every top-level resource of every version (subresources left out). */
  readonly resources: readonly ResourceMapping[];
}

export interface Discovery {
  readonly groups: readonly DiscoveredGroup[];
  /** Group-versions that could not be read (an aggregated API that is down); their kinds are unknown. */
  readonly failed: readonly string[];
  readonly aggregated: boolean;
}

/** Reads the whole discovery tree. */
export async function discover(client: DiscoveryClient, signal?: AbortSignal): Promise<Discovery> {
  const [core, named] = await Promise.all([
    client.requestRaw({
      method: "GET",
      path: "/api",
      accept: aggregatedDiscoveryAccept,
      ...(signal === undefined ? {} : { signal }),
    }),
    client.requestRaw({
      method: "GET",
      path: "/apis",
      accept: aggregatedDiscoveryAccept,
      ...(signal === undefined ? {} : { signal }),
    }),
  ]);
  if (isAggregated(core.headers["content-type"]) && isAggregated(named.headers["content-type"])) {
    const a = parseAggregatedDiscovery(JSON.parse(core.body.toString("utf8")));
    const b = parseAggregatedDiscovery(JSON.parse(named.body.toString("utf8")));
    return { groups: [...a.groups, ...b.groups], failed: [...a.failed, ...b.failed], aggregated: true };
  }
  return legacyDiscovery(
    client,
    JSON.parse(core.body.toString("utf8")),
    JSON.parse(named.body.toString("utf8")),
    signal,
  );
}

function isAggregated(contentType: string | undefined): boolean {
  return contentType !== undefined && contentType.includes("as=APIGroupDiscoveryList");
}

/**
 * An APIGroupDiscoveryList. Versions come preferred first. Stale group-versions (an aggregated
 * API server whose discovery could not be refreshed) are reported as failed, as client-go does.
 */
export function parseAggregatedDiscovery(value: unknown): { groups: DiscoveredGroup[]; failed: string[] } {
  const groups: DiscoveredGroup[] = [];
  const failed: string[] = [];
  const items = isRecord(value) && Array.isArray(value["items"]) ? value["items"] : [];
  for (const item of items) {
    if (!isRecord(item)) continue;
    const metadata = isRecord(item["metadata"]) ? item["metadata"] : {};
    const group = stringField(metadata, "name") ?? "";
    const versions: string[] = [];
    const resources: ResourceMapping[] = [];
    for (const v of Array.isArray(item["versions"]) ? item["versions"] : []) {
      if (!isRecord(v)) continue;
      const version = stringField(v, "version");
      if (version === undefined) continue;
      if (v["freshness"] === "Stale") {
        failed.push(group === "" ? version : `${group}/${version}`);
        continue;
      }
      versions.push(version);
      for (const r of Array.isArray(v["resources"]) ? v["resources"] : []) {
        if (!isRecord(r)) continue;
        const resource = stringField(r, "resource");
        const kind = isRecord(r["responseKind"]) ? stringField(r["responseKind"], "kind") : undefined;
        if (resource === undefined || kind === undefined || kind === "") continue;
        resources.push({
          group,
          version,
          kind,
          resource,
          namespaced: r["scope"] === "Namespaced",
          verbs: stringArray(r["verbs"]),
        });
      }
    }
    groups.push({ name: group, versions, resources });
  }
  return { groups, failed };
}

/** An APIGroupList: each group's versions, preferred first. */
export function parseApiGroupList(value: unknown): { name: string; versions: string[] }[] {
  const out: { name: string; versions: string[] }[] = [];
  const groups = isRecord(value) && Array.isArray(value["groups"]) ? value["groups"] : [];
  for (const g of groups) {
    if (!isRecord(g)) continue;
    const name = stringField(g, "name");
    if (name === undefined) continue;
    const preferred = isRecord(g["preferredVersion"]) ? stringField(g["preferredVersion"], "version") : undefined;
    const versions = (Array.isArray(g["versions"]) ? g["versions"] : []).flatMap((v) => {
      const version = isRecord(v) ? stringField(v, "version") : undefined;
      return version === undefined ? [] : [version];
    });
    if (preferred !== undefined) versions.sort((a, b) => Number(b === preferred) - Number(a === preferred));
    out.push({ name, versions });
  }
  return out;
}

/** An APIResourceList, without subresources ("pods/status"). */
export function parseApiResourceList(value: unknown, group: string, version: string): ResourceMapping[] {
  const resources = isRecord(value) && Array.isArray(value["resources"]) ? value["resources"] : [];
  const out: ResourceMapping[] = [];
  for (const r of resources) {
    if (!isRecord(r)) continue;
    const resource = stringField(r, "name");
    const kind = stringField(r, "kind");
    if (resource === undefined || resource.includes("/") || kind === undefined) continue;
    out.push({ group, version, kind, resource, namespaced: r["namespaced"] === true, verbs: stringArray(r["verbs"]) });
  }
  return out;
}

async function legacyDiscovery(
  client: DiscoveryClient,
  core: unknown,
  named: unknown,
  signal: AbortSignal | undefined,
): Promise<Discovery> {
  const coreVersions = isRecord(core) ? stringArray(core["versions"]) : [];
  const groups = [{ name: "", versions: coreVersions }, ...parseApiGroupList(named)];
  const failed: string[] = [];
  const discovered = await Promise.all(
    groups.map(async (g): Promise<DiscoveredGroup> => {
      const perVersion = await Promise.all(
        g.versions.map(async (version) => {
          const path = g.name === "" ? `/api/${version}` : `/apis/${g.name}/${version}`;
          try {
            return parseApiResourceList(
              await client.request({ method: "GET", path, ...(signal === undefined ? {} : { signal }) }),
              g.name,
              version,
            );
          } catch (error) {
            // One aggregated API being down must not hide every other kind.
            if (signal?.aborted === true) throw error;
            failed.push(g.name === "" ? version : `${g.name}/${version}`);
            return undefined;
          }
        }),
      );
      const versions = g.versions.filter((_, i) => perVersion[i] !== undefined);
      return { name: g.name, versions, resources: perVersion.flatMap((r) => r ?? []) };
    }),
  );
  return { groups: discovered, failed, aggregated: false };
}

function stringArray(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}
