/**
 * A suspended sync (`driftless.dev/suspend: "true"`): the pass reads the source as usual, then asks
 * the applier what it would write (a dry run of the same three-way match) and what it would prune,
 * and reports that instead of doing it.
 */
import {
  applyObject,
  idKey,
  mapLimit,
  Operation,
  type ApplyOptions,
  type DesiredObject,
  type ObjectId,
} from "@driftless/applier";

/** What a suspended pass found: the objects a pass would create, update or delete. */
export interface SuspendedDrift {
  readonly missing: readonly ObjectId[];
  readonly changed: readonly ObjectId[];
  readonly wouldPrune: readonly ObjectId[];
  /** Objects that could not be compared (unknown kind, API error): reported, never hidden. */
  readonly unknown: readonly ObjectId[];
}

/** Objects named in the condition's message; the counts are always complete. */
const namedInMessage = 5;

export async function measureDrift(
  desired: readonly DesiredObject[],
  recorded: readonly ObjectId[],
  options: ApplyOptions,
): Promise<SuspendedDrift> {
  const outcomes = await mapLimit(desired, options.concurrency ?? 32, (d) =>
    applyObject(d, { ...options, dryRun: true }),
  );
  const ids = (operation: Operation): ObjectId[] =>
    outcomes.filter((o) => o.operation === operation).map((o) => o.desired.id);
  const declared = new Set(desired.map((d) => idKey(d.id)));
  return {
    missing: ids(Operation.Created),
    changed: ids(Operation.Updated),
    wouldPrune: recorded.filter((id) => !declared.has(idKey(id))),
    unknown: ids(Operation.Failed),
  };
}

/** The Suspended condition's message: counts, and the first few objects of each kind of drift. */
export function describeDrift(drift: SuspendedDrift, commit: string | undefined): string {
  const parts: string[] = [];
  const list = (label: string, ids: readonly ObjectId[]): void => {
    if (ids.length === 0) return;
    const named = ids.slice(0, namedInMessage).map(describeId).join(", ");
    parts.push(`${ids.length} ${label} (${named}${ids.length > namedInMessage ? ", ..." : ""})`);
  };
  list("missing", drift.missing);
  list("changed", drift.changed);
  list("would be pruned", drift.wouldPrune);
  list("not compared", drift.unknown);
  const at = commit === undefined ? "" : ` at commit ${commit}`;
  const what = parts.length === 0 ? "the cluster matches the source" : parts.join("; ");
  return `Suspended by driftless.dev/suspend: nothing is applied, pruned or corrected. Compared with the source${at}: ${what}`;
}

/** `ConfigMap team-a/settings`, `Deployment.apps team-a/web`, `ClusterRole.rbac.authorization.k8s.io admin`. */
function describeId(id: ObjectId): string {
  return `${id.kind}${id.group === "" ? "" : `.${id.group}`} ${id.namespace ? `${id.namespace}/` : ""}${id.name}`;
}
