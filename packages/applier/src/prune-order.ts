/**
 * depends-on when objects go, as Config Sync's applier and destroyer (cli-utils) honour it: a dependent is
 * deleted before its dependency, and the dependency only once the dependent is gone. Config Sync documents
 * it as the way to keep a RepoSync's RoleBinding until the RepoSync's own deletion work is done.
 */
import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import { describeId, idKey, objMetadataKey, type ObjectId } from "./object-id.ts";

/** A candidate and the candidates it depends on (its live `config.kubernetes.io/depends-on`). */
export interface PruneNode {
  readonly id: ObjectId;
  readonly dependsOn: readonly ObjectId[];
}

/** For each candidate (by idKey), the candidates that depend on it; references outside `nodes` add nothing. */
export function dependentsOf<T extends PruneNode>(nodes: readonly T[]): Map<string, T[]> {
  const keys = new Set(nodes.map((n) => idKey(n.id)));
  const dependents = new Map<string, T[]>();
  for (const node of nodes) {
    for (const ref of node.dependsOn) {
      const key = idKey(ref);
      if (!keys.has(key) || key === idKey(node.id)) continue;
      const list = dependents.get(key) ?? [];
      list.push(node);
      dependents.set(key, list);
    }
  }
  return dependents;
}

/**
 * The candidates in waves: every dependent in an earlier wave than each of its dependencies (those outside
 * `nodes` stay, or go in another rank). A cycle, possible only in live annotations (a source with one is
 * never applied), is cut where it is found.
 */
export function dependentsFirst<T extends PruneNode>(
  nodes: readonly T[],
  dependents: ReadonlyMap<string, readonly T[]> = dependentsOf(nodes),
): T[][] {
  if (dependents.size === 0) return nodes.length === 0 ? [] : [[...nodes]];
  const depth = new Map<string, number>();
  const visiting = new Set<string>();
  const depthOf = (node: T): number => {
    const key = idKey(node.id);
    const known = depth.get(key);
    if (known !== undefined) return known;
    if (visiting.has(key)) return 0;
    visiting.add(key);
    let d = 0;
    for (const dependent of dependents.get(key) ?? []) d = Math.max(d, depthOf(dependent) + 1);
    visiting.delete(key);
    depth.set(key, d);
    return d;
  };
  const waves: T[][] = [];
  for (const node of nodes) (waves[depthOf(node)] ??= []).push(node);
  return waves.filter((wave) => wave !== undefined);
}

/** Why a dependent holds its dependency back, in cli-utils' words. */
export const DependentHold = {
  Failed: "actuation failed",
  Skipped: "actuation skipped",
  Timeout: "reconcile timeout",
} as const;
export type DependentHold = (typeof DependentHold)[keyof typeof DependentHold];

/**
 * A dependency left in place because a dependent of it failed to go, was itself held, or was not gone
 * within the wait: kept in the inventory and tried again by the next pass, as Config Sync skips it (its skip
 * errors carry no errorResources).
 */
export class DependentNotDeletedError extends DriftlessError {
  constructor(id: ObjectId, dependent: ObjectId, hold: DependentHold) {
    super({
      code: KnvCode.Apply,
      errorClass: ErrorClass.Retry,
      // The dependent by its cli-utils key, as Config Sync's applier names it (`shop_web_apps_Deployment`).
      message: `skipped delete of ${describeId(id)}: dependent delete ${hold}: ${objMetadataKey(dependent)}`,
    });
  }
}
