import { DriftlessError, ErrorClass, KnvCode } from "@driftless/api";
import { isManagementDisabled } from "./decorate.ts";
import { DependencyActuation, DependencyNotAppliedError } from "./dependency-readiness.ts";
import type { DesiredObject } from "./desired.ts";
import { describeId, idKey, objMetadataKey, type ObjectId } from "./object-id.ts";

/**
 * Apply order as waves: every object in a wave may be applied concurrently; a wave starts when the
 * previous one is done. CRDs come first (their custom resources cannot be created before the type
 * exists), then Namespaces (their contents cannot be created before them), then the rest, and
 * `depends-on` pushes an object to a later wave than each of its dependencies.
 */
export interface Plan {
  readonly waves: readonly (readonly DesiredObject[])[];
  /** Objects left out because a dependency is not in the source; reported as errors. */
  readonly errors: readonly DriftlessError[];
  /**
   * An external or duplicate dependency: as cli-utils' validation (ExitEarly, Config Sync's policy), nothing of the
   * commit is applied or pruned; only `managed: disabled` declarations are still released.
   */
  readonly invalid: boolean;
  /** Objects leaving the source that a declared object still depends on: their prune is skipped, with this error. */
  readonly pruneHolds: ReadonlyMap<string, DriftlessError>;
}

export class CyclicDependencyError extends DriftlessError {
  constructor(cycle: readonly DesiredObject[]) {
    super({
      code: KnvCode.CyclicDependency,
      errorClass: ErrorClass.Terminal,
      // Config Sync's applier words it "cyclic dependency: a -> b; b -> a" (one edge each).
      message: `cyclic dependency: ${edges(cycle)} (config.kubernetes.io/depends-on)`,
    });
  }
}

/**
 * A depends-on naming an object this source does not apply (absent, management disabled, or only on the
 * cluster): KNV2009 "external dependency", as Config Sync's applier reports it. A validation error there
 * (cli-utils' ExitEarly): nothing of the commit is applied.
 */
export class MissingDependencyError extends DriftlessError {
  constructor(object: DesiredObject, missing: ObjectId) {
    super({
      code: KnvCode.Apply,
      errorClass: ErrorClass.Terminal,
      message: `external dependency: ${describeId(object.id)} -> ${describeId(missing)}: it is not applied from this source; declare it or remove the depends-on reference (nothing of this commit is applied)`,
    });
  }
}

/** A depends-on naming one object twice: to cli-utils an invalid annotation, so a validation error as an external dependency. */
export class DuplicateDependencyError extends DriftlessError {
  constructor(object: DesiredObject, dependency: ObjectId) {
    super({
      code: KnvCode.Apply,
      errorClass: ErrorClass.Terminal,
      message: `duplicate dependency: ${describeId(object.id)} -> ${describeId(dependency)}: name it once in config.kubernetes.io/depends-on (nothing of this commit is applied)`,
    });
  }
}

/**
 * A depends-on naming an object this pass prunes: cli-utils graphs it (no external dependency) and then skips
 * both, as their actuation strategies differ, in its words (`dependency scheduled for delete: <key>`).
 */
export class DependencyScheduledForDeleteError extends DriftlessError {
  constructor(object: DesiredObject, dependency: ObjectId) {
    super({
      code: KnvCode.Apply,
      errorClass: ErrorClass.Terminal,
      message: `skipped apply of ${describeId(object.id)}: dependency scheduled for delete: ${objMetadataKey(dependency)}`,
    });
  }
}

/** The other half: the object leaving the source is kept (and stays in the inventory) while its dependent is declared. */
export class DependentScheduledForApplyError extends DriftlessError {
  constructor(id: ObjectId, dependent: ObjectId) {
    super({
      code: KnvCode.Apply,
      errorClass: ErrorClass.Terminal,
      message: `skipped delete of ${describeId(id)}: dependent scheduled for apply: ${objMetadataKey(dependent)}`,
    });
  }
}

function edges(cycle: readonly DesiredObject[]): string {
  const names = cycle.map((o) => describeId(o.id));
  return names
    .slice(1)
    .map((to, i) => `${names[i] ?? ""} -> ${to}`)
    .join("; ");
}

function baseRank(object: DesiredObject): number {
  if (object.id.kind === "CustomResourceDefinition" && object.id.group === "apiextensions.k8s.io") return 0;
  if (object.id.kind === "Namespace" && object.id.group === "") return 1;
  return 2;
}

/**
 * Throws CyclicDependencyError when depends-on has a cycle: nothing of such a source is applied. `leaving`
 * holds what this pass prunes (in the inventory, no longer declared): depending on one of those is no
 * external dependency, as cli-utils graphs the apply and prune sets together.
 */
export function plan(objects: readonly DesiredObject[], leaving: readonly ObjectId[] = []): Plan {
  // A `managed: disabled` declaration is released, not applied: depending on it is an external dependency.
  const byKey = new Map(objects.filter((o) => !isManagementDisabled(o.object)).map((o) => [idKey(o.id), o]));
  const leavingKeys = new Set(leaving.map(idKey));
  const external: DriftlessError[] = [];
  const skips: DriftlessError[] = [];
  const pruneHolds = new Map<string, DriftlessError>();
  const excluded = new Set<string>();
  for (const object of objects) {
    // Released, not applied: as Config Sync leaves it out of the applier's graph, its depends-on is not checked.
    if (isManagementDisabled(object.object)) continue;
    const seen = new Set<string>();
    for (const dep of object.dependsOn) {
      const key = idKey(dep);
      if (seen.has(key)) {
        external.push(new DuplicateDependencyError(object, dep));
        continue;
      }
      seen.add(key);
      if (byKey.has(key)) continue;
      excluded.add(idKey(object.id));
      if (!leavingKeys.has(key)) {
        external.push(new MissingDependencyError(object, dep));
        continue;
      }
      skips.push(new DependencyScheduledForDeleteError(object, dep));
      if (!pruneHolds.has(key)) pruneHolds.set(key, new DependentScheduledForApplyError(dep, object.id));
    }
  }

  const wave = new Map<string, number>();
  const visiting: DesiredObject[] = [];
  const rankOf = (object: DesiredObject): number => {
    const key = idKey(object.id);
    const known = wave.get(key);
    if (known !== undefined) return known;
    if (visiting.includes(object)) {
      throw new CyclicDependencyError([...visiting.slice(visiting.indexOf(object)), object]);
    }
    visiting.push(object);
    let rank = baseRank(object);
    for (const dep of object.dependsOn) {
      const target = byKey.get(idKey(dep));
      if (target !== undefined) rank = Math.max(rank, rankOf(target) + 1);
      if (target === undefined || !excluded.has(idKey(target.id)) || isManagementDisabled(object.object)) continue;
      // A dependency not applied skips its dependents, in cli-utils' words.
      if (!excluded.has(key)) skips.push(new DependencyNotAppliedError(object, target.id, DependencyActuation.Skipped));
      excluded.add(key);
    }
    visiting.pop();
    wave.set(key, rank);
    return rank;
  };

  const waves: DesiredObject[][] = [];
  for (const object of objects) {
    const rank = rankOf(object);
    if (excluded.has(idKey(object.id))) continue;
    // Config Sync releases `managed: disabled` declarations before its applier validates anything.
    if (external.length > 0 && !isManagementDisabled(object.object)) continue;
    (waves[rank] ??= []).push(object);
  }
  const applied = waves.filter((w) => w !== undefined && w.length > 0);
  if (external.length > 0) return { waves: applied, errors: external, invalid: true, pruneHolds: new Map() };
  return { waves: applied, errors: skips, invalid: false, pruneHolds };
}
