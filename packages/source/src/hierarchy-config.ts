/**
 * HierarchyConfig (`system/`): per kind, whether objects of it may sit in abstract namespace
 * directories and be inherited (`inherit`, the default) or not (`none`).
 */
import { shapeProblem, type Shape } from "./json-shape.ts";
import type { SourceError } from "./errors.ts";
import {
  ClusterScopedHierarchyConfigError,
  IllegalHierarchyModeError,
  UnsupportedHierarchyConfigResourceError,
} from "./hierarchy-errors.ts";
import { manifestResource, unparsableConfig, what } from "./hierarchy-raw.ts";
import { isJsonArray, isJsonObject } from "./json.ts";
import type { Manifest } from "./manifest.ts";

const ConfigManagementGroup = "configmanagement.gke.io";

/** `group/kind` of each kind a HierarchyConfig sets to `hierarchyMode: none`. */
export type NotInherited = ReadonlySet<string>;

export function groupKindKey(group: string, kind: string): string {
  return `${group}/${kind}`;
}

/** HierarchyConfig's spec as Config Sync's Go type has it; a value of another type is KNV1006. */
const hierarchyConfigSpec: Shape = {
  fields: {
    resources: { list: { fields: { group: "string", kinds: { list: "string" }, hierarchyMode: "string" } } },
  },
};

export interface HierarchyConfigs {
  readonly notInherited: NotInherited;
  readonly errors: readonly SourceError[];
}

/**
 * Validates every HierarchyConfig against the kinds declared in `cluster/` (a cluster-scoped kind has
 * nothing to inherit) and collects the kinds set to `none`.
 */
export function readHierarchyConfigs(
  configs: readonly Manifest[],
  clusterKinds: ReadonlySet<string>,
): HierarchyConfigs {
  const notInherited = new Set<string>();
  const errors: SourceError[] = [];
  for (const config of configs) {
    const details = { resources: [manifestResource(config)] };
    const spec = config.raw["spec"];
    // Config Sync decodes it into its type first: a value of the wrong type is all it reports of it.
    const unreadable = shapeProblem("spec", hierarchyConfigSpec, spec);
    if (unreadable !== undefined) {
      errors.push(unparsableConfig(config, unreadable));
      continue;
    }
    const resources = isJsonObject(spec) && isJsonArray(spec["resources"]) ? spec["resources"] : [];
    for (const resource of resources) {
      if (!isJsonObject(resource)) continue;
      const group = typeof resource["group"] === "string" ? resource["group"] : "";
      const kinds = isJsonArray(resource["kinds"])
        ? resource["kinds"].filter((k): k is string => typeof k === "string")
        : [];
      const mode = resource["hierarchyMode"] ?? "";
      const groupKinds = kinds.length === 0 ? [""] : kinds;
      if (mode !== "" && mode !== "inherit" && mode !== "none") {
        errors.push(
          new IllegalHierarchyModeError(
            `${what(config)}: hierarchyMode ${JSON.stringify(mode)} of ${describe(group, groupKinds[0] ?? "")} is not valid; use "inherit" or "none"`,
            details,
          ),
        );
      }
      for (const kind of groupKinds) {
        if (kind === "" || (group === "" && kind === "Namespace") || group === ConfigManagementGroup) {
          const why = kind === "" ? "names no kinds" : "may not be configured";
          errors.push(
            new UnsupportedHierarchyConfigResourceError(
              `${what(config)}: ${describe(group, kind)} ${why} in a HierarchyConfig`,
              details,
            ),
          );
        } else if (clusterKinds.has(groupKindKey(group, kind))) {
          errors.push(
            new ClusterScopedHierarchyConfigError(
              `${what(config)}: ${describe(group, kind)} is cluster-scoped and cannot be inherited; remove it from the HierarchyConfig`,
              details,
            ),
          );
        } else if (mode === "none") {
          notInherited.add(groupKindKey(group, kind));
        }
      }
    }
  }
  return { notInherited, errors };
}

function describe(group: string, kind: string): string {
  return `kind "${kind}"${group === "" ? "" : ` of group "${group}"`}`;
}
