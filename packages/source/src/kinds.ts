/**
 * What the cluster (or the source itself) says about a kind: its resource name and whether it is
 * namespaced. The reconciler plugs in API discovery; CRDs declared in the same source are consulted
 * first, so a custom resource can ship with its CRD in one commit, as with Config Sync.
 */
import { CrdGroup, CrdKind } from "./constants.ts";
import { isJsonArray, isJsonObject } from "./json.ts";
import type { JsonObject } from "./json.ts";
import type { Manifest } from "./manifest.ts";

export interface KindInfo {
  readonly group: string;
  readonly version: string;
  /** Plural resource name used in REST paths, e.g. "deployments". */
  readonly resource: string;
  readonly namespaced: boolean;
}

/** Answers for kinds the source uses. Called once per distinct apiVersion and kind. */
export interface KindResolver {
  /** undefined when the cluster does not serve the kind. May reject if discovery itself fails. */
  resolveKind(apiVersion: string, kind: string): KindInfo | undefined | Promise<KindInfo | undefined>;
}

export function kindKey(apiVersion: string, kind: string): string {
  return `${apiVersion}\n${kind}`;
}

/**
 * Kinds defined by CustomResourceDefinitions in the source, keyed by kindKey. Malformed CRDs are
 * skipped here (the source's first stage refuses them, KNV1065) and their kinds fall back to discovery.
 */
export function kindsFromCrds(manifests: readonly Manifest[]): ReadonlyMap<string, KindInfo> {
  const kinds = new Map<string, KindInfo>();
  for (const manifest of manifests) {
    if (manifest.group !== CrdGroup || manifest.kind !== CrdKind) continue;
    const spec = manifest.raw["spec"];
    if (!isJsonObject(spec)) continue;
    const names = spec["names"];
    const group = spec["group"];
    const scope = spec["scope"];
    if (!isJsonObject(names) || typeof group !== "string" || group === "") continue;
    const kind = names["kind"];
    const plural = names["plural"];
    if (typeof kind !== "string" || typeof plural !== "string" || (scope !== "Namespaced" && scope !== "Cluster"))
      continue;
    for (const version of crdVersions(spec)) {
      kinds.set(kindKey(`${group}/${version}`, kind), {
        group,
        version,
        resource: plural,
        namespaced: scope === "Namespaced",
      });
    }
  }
  return kinds;
}

/** Served versions: `spec.versions[].name` (v1), or `spec.version` (v1beta1 CRDs). */
function crdVersions(spec: JsonObject): string[] {
  const served: string[] = [];
  const versions = spec["versions"];
  if (isJsonArray(versions)) {
    for (const entry of versions) {
      if (!isJsonObject(entry)) continue;
      const name = entry["name"];
      if (typeof name === "string" && entry["served"] !== false) served.push(name);
    }
  }
  const single = spec["version"];
  if (typeof single === "string" && !served.includes(single)) served.push(single);
  return served;
}
