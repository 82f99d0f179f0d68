import type { ResourceMapping } from "@driftless/kube";
import { applyObject } from "./apply-object.ts";
import type { ApplyOptions } from "./apply-options.ts";
import { Operation, type ApplyOutcome } from "./apply-outcome.ts";
import { mapLimit } from "./concurrency.ts";
import { isManagementDisabled } from "./decorate.ts";
import {
  DependencyActuation,
  DependencyNotAppliedError,
  DependencyNotReconciledError,
  DependencyReadiness,
} from "./dependency-readiness.ts";
import type { DesiredObject } from "./desired.ts";
import { HealthStatus } from "./kstatus.ts";
import type { PlanOutline } from "./live-state.ts";
import { idKey, type ObjectId } from "./object-id.ts";
import type { Plan } from "./plan.ts";
import { ManagementConflictError } from "./precedence.ts";
import { waitForEstablished } from "./wait.ts";

/**
 * Applies the plan wave by wave. One failing object does not stop the others; only objects that
 * depend on it (depends-on) are skipped. Never throws for a per-object failure.
 */
export async function applyPlan(plan: Plan, options: ApplyOptions): Promise<ApplyOutcome[]> {
  const planDone = options.live.applyingPlan?.(outlineOf(plan));
  try {
    return await applyWaves(plan, options);
  } finally {
    planDone?.();
  }
}

function kindKey(ref: { readonly group: string; readonly kind: string }): string {
  return `${ref.group}/${ref.kind}`;
}

function outlineOf(plan: Plan): PlanOutline {
  const objects = new Map<string, number>();
  // Dependencies are waited on through the live state: their types must stay watched.
  const awaited = new Set<string>();
  for (const wave of plan.waves) {
    for (const desired of wave) {
      const key = kindKey(desired.id);
      objects.set(key, (objects.get(key) ?? 0) + 1);
      for (const dependency of desired.dependsOn) awaited.add(kindKey(dependency));
    }
  }
  return {
    objectsOf: (mapping) => objects.get(kindKey(mapping)) ?? 0,
    keepWatching: (mapping) => awaited.has(kindKey(mapping)),
  };
}

async function applyWaves(plan: Plan, options: ApplyOptions): Promise<ApplyOutcome[]> {
  const outcomes: ApplyOutcome[] = [];
  /** Objects of earlier waves that were not applied, and how their apply ended. */
  const notApplied = new Map<string, DependencyActuation>();
  /** Kinds (group/kind) of CRDs of this plan whose names the API server refused, to each CRD's id. */
  const refusedKinds = new Map<string, ObjectId>();
  const readiness = new DependencyReadiness(options);
  for (const wave of plan.waves) {
    if (options.halt?.aborted === true) break;
    await prepareTypes(wave, options);
    const results = await mapLimit(wave, options.concurrency ?? 32, async (desired): Promise<ApplyOutcome> => {
      const blocked = desired.dependsOn.find((dependency) => notApplied.has(idKey(dependency)));
      if (blocked !== undefined) {
        const actuation = notApplied.get(idKey(blocked)) ?? DependencyActuation.Failed;
        return {
          desired,
          operation: Operation.Skipped,
          error: new DependencyNotAppliedError(desired, blocked, actuation),
        };
      }
      // cli-utils makes a custom resource depend on its CRD in the same apply: skipped when that failed.
      const refused = refusedKinds.get(kindKey(desired.id));
      if (refused !== undefined) {
        const error = new DependencyNotReconciledError(desired, refused, HealthStatus.Failed);
        return { desired, operation: Operation.Skipped, error };
      }
      // As Config Sync does: a dependent is applied once what it depends on is Current, not just written.
      for (const dependency of desired.dependsOn) {
        const health = await readiness.current(idKey(dependency));
        if (health !== HealthStatus.Current) {
          const error = new DependencyNotReconciledError(desired, dependency, health);
          return { desired, operation: Operation.Skipped, error };
        }
      }
      return applyObject(desired, options);
    });
    for (const outcome of results) {
      if (outcome.error !== undefined) notApplied.set(idKey(outcome.desired.id), actuationOf(outcome));
      else readiness.applied(outcome);
      outcomes.push(outcome);
    }
    const crds = results.filter((r) => r.desired.id.kind === "CustomResourceDefinition" && r.error === undefined);
    if (crds.length > 0) {
      // Custom resources of a new CRD can only be mapped and created once it is Established.
      const established = await waitForEstablished(
        options.client,
        crds.map((r) => r.desired.id.name),
        options.crdEstablishTimeoutMs ?? 60_000,
        options.signal,
      );
      // Their custom resources are matched with the schema just applied, not one read before it.
      for (const crd of established) options.schemas?.observe(crd);
      if (options.signal?.aborted !== true) {
        const names = new Set(established.map((crd) => crd.metadata?.name));
        for (const r of crds) if (!names.has(r.desired.id.name)) refusedKinds.set(servedKind(r.desired), r.desired.id);
      }
      options.mapper.invalidate();
    }
  }
  return outcomes;
}

/** The group/kind a CRD declares (spec.group, spec.names.kind). */
function servedKind(crd: DesiredObject): string {
  const spec = (crd.object["spec"] ?? {}) as { group?: unknown; names?: { kind?: unknown } };
  return `${String(spec.group)}/${String(spec.names?.kind)}`;
}

/**
 * As cli-utils records a dependency that was not applied: failed when its write failed, skipped when it was
 * held (by its own dependency) or is another sync's object (Config Sync's inventory policy skips it).
 */
function actuationOf(outcome: ApplyOutcome): DependencyActuation {
  if (outcome.operation === Operation.Skipped || outcome.error instanceof ManagementConflictError)
    return DependencyActuation.Skipped;
  return DependencyActuation.Failed;
}

/**
 * Lets the live state start reading every type of the wave at once. The API server answers the
 * first list of a type it has just started serving (a CRD of this pass) after about a second; read
 * type by type as the applier reaches them, 100 new CRDs cost 100 such seconds.
 */
async function prepareTypes(wave: readonly DesiredObject[], options: ApplyOptions): Promise<void> {
  if (options.live.prepare === undefined) return;
  const kinds = new Map<string, DesiredObject>();
  for (const desired of wave) {
    // An object whose management is disabled is released, not applied: alone it makes no type managed.
    if (!isManagementDisabled(desired.object)) kinds.set(`${desired.apiVersion}/${desired.id.kind}`, desired);
  }
  const mappings = await Promise.all(
    // A kind discovery does not know yet is left to its apply, which refreshes discovery once and
    // reports it; looking it up here as well would cost a second refresh.
    [...kinds.values()].map((d) => options.mapper.knownMappingFor(d.apiVersion, d.id.kind).catch(() => undefined)),
  );
  options.live.prepare(mappings.filter((m): m is ResourceMapping => m !== undefined));
}
