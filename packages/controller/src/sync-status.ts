/**
 * The manager's part of a sync's status: `Stalled` (it cannot set the reconciler up, e.g. an
 * invalid spec) and `Reconciling` (it is still setting it up). The reconciler owns every other
 * field; both write through the status subresource with optimistic concurrency, so neither loses
 * the other's update, and an unchanged condition is never rewritten. `observedGeneration` is the
 * reconciler's after each pass, and the manager's whenever it reports Stalled=True: a pass of this
 * generation may never come to write it.
 */
import {
  StalledErrorSummary,
  SyncConditionType,
  clearCondition,
  getCondition,
  reconcilerName,
  removeCondition,
  setCondition,
  stalledMessage,
  type ConditionInput,
  type DriftlessError,
  type SetConditionResult,
  type SyncCondition,
} from "@driftless/api";
import type { KubeClient } from "@driftless/kube";
import type { SyncRef } from "@driftless/queue";
import { writeStatus } from "@driftless/sync";

/** One change to a sync's conditions: `set` one, or `clear` one as Config Sync's ClearCondition does. */
type ConditionStep = (conditions: readonly SyncCondition[] | undefined, now: Date) => SetConditionResult;

function set(input: ConditionInput): ConditionStep {
  return (conditions, now) => setCondition(conditions, input, now);
}

function clear(type: SyncConditionType): ConditionStep {
  return (conditions, now) => clearCondition(conditions, type, now);
}

function applyConditions(
  current: { conditions?: SyncCondition[] },
  steps: readonly ConditionStep[],
  now: Date,
): SyncCondition[] | undefined {
  let conditions: readonly SyncCondition[] | undefined = current.conditions;
  let changed = false;
  for (const step of steps) {
    const result = step(conditions, now);
    conditions = result.conditions;
    changed ||= result.changed;
  }
  return changed ? [...(conditions ?? [])] : undefined;
}

/**
 * Stalled=True with the validation errors, as Config Sync's SetStalled(rs, "Validation", err): the error's
 * text as the message, no `errors` list, a summary of one; Reconciling is left as it is.
 */
export async function reportStalled(
  client: KubeClient,
  sync: SyncRef,
  reason: string,
  errors: readonly DriftlessError[],
): Promise<void> {
  await writeStatus(client, sync, (raw, current) => {
    const conditions = applyStalled(current, stalledInput(reason, stalledMessage(errors)), [], new Date());
    const name = reconcilerName(sync.kind, sync.namespace, sync.name);
    if (
      conditions === undefined &&
      current["observedGeneration"] === raw.metadata.generation &&
      current["reconciler"] === name
    )
      return undefined;
    // No reconciler runs for a stalled sync, so the manager is the one to say which generation it judged;
    // status.reconciler names the one it would run, as Config Sync's reconciler-manager writes it.
    return {
      ...current,
      observedGeneration: raw.metadata.generation ?? 0,
      reconciler: name,
      ...(conditions === undefined ? {} : { conditions }),
    };
  });
}

/** Config Sync's Stalled=True: its error's text, no `errors` list, and always a summary of one error. */
function stalledInput(reason: string, message: string): ConditionInput {
  return { type: SyncConditionType.Stalled, status: "True", reason, message, errorSummary: StalledErrorSummary };
}

/**
 * Sets Stalled (and `others`), removing the Syncing condition when Stalled turns True, as Config Sync's
 * SetStalled does on a transition: the last pass's outcome is not the sync's state while it is stalled.
 */
function applyStalled(
  current: { conditions?: SyncCondition[] },
  stalled: ConditionInput,
  others: readonly ConditionStep[],
  now: Date,
): SyncCondition[] | undefined {
  const wasStalled = getCondition(current.conditions, SyncConditionType.Stalled)?.status === "True";
  const conditions = applyConditions(current, [...others, set(stalled)], now);
  if (wasStalled || conditions === undefined) return conditions;
  return [...removeCondition(conditions, SyncConditionType.Syncing).conditions];
}

/**
 * Reconciling True while the reconciler is coming up, cleared once it runs; Stalled cleared. Cleared as
 * Config Sync's manager clears them: a True condition turns False with no reason, an absent one stays
 * absent (a sync that never stalled has no Stalled condition).
 */
export function reportReconciling(
  client: KubeClient,
  sync: SyncRef,
  ready: boolean,
  reason: string,
  message: string,
): Promise<void> {
  const reconciling = ready
    ? clear(SyncConditionType.Reconciling)
    : set({ type: SyncConditionType.Reconciling, status: "True", reason, message });
  return reportReconcilerConditions(client, sync, [reconciling, clear(SyncConditionType.Stalled)]);
}

/**
 * The reconciler cannot start or keeps exiting: Stalled=True with its own last words (forbidden,
 * missing role, bad credentials), so `nomos status` and `driftless status` show why, not just
 * "failed"; Reconciling stays True while the manager keeps restarting it.
 */
export function reportReconcilerFailing(client: KubeClient, sync: SyncRef, failure: string): Promise<void> {
  const reason = "ReconcilerFailed";
  return reportReconcilerConditions(
    client,
    sync,
    [
      set({
        type: SyncConditionType.Reconciling,
        status: "True",
        reason,
        message: "The reconciler is being restarted",
      }),
    ],
    { observed: true, stalled: stalledInput(reason, failure) },
  );
}

/**
 * A step of setting the reconciler up failed (the API server refused its ServiceAccount, a binding, its
 * Deployment): Stalled=True with the error's text (led by its KNV code) and Reconciling=True while the
 * manager keeps at it, as Config Sync's reconciler-manager reports an upsert that failed. `reason` is the
 * refused object's kind (ServiceAccount, RoleBinding, Deployment...), as Config Sync's is.
 */
export function reportSetupFailing(
  client: KubeClient,
  sync: SyncRef,
  reason: string,
  error: DriftlessError,
): Promise<void> {
  return reportReconcilerConditions(
    client,
    sync,
    // Config Sync's words: the stage as the reason.
    [set({ type: SyncConditionType.Reconciling, status: "True", reason: "Setup", message: "Setup stalled" })],
    { observed: true, stalled: stalledInput(reason, stalledMessage([error])) },
  );
}

/**
 * The conditions of a sync whose reconciler is set up, with `status.reconciler` naming it. `observed`: the
 * manager's verdict is on the current generation (a failure), so `observedGeneration` says so, as Config
 * Sync's manager writes it; kstatus readers otherwise read the lagging generation as InProgress for good.
 * Left to the reconciler otherwise: its pass tells a new spec's retry of a failed commit by it.
 */
async function reportReconcilerConditions(
  client: KubeClient,
  sync: SyncRef,
  steps: readonly ConditionStep[],
  { observed = false, stalled }: { readonly observed?: boolean; readonly stalled?: ConditionInput } = {},
): Promise<void> {
  await writeStatus(client, sync, (raw, current) => {
    const now = new Date();
    const conditions =
      stalled === undefined ? applyConditions(current, steps, now) : applyStalled(current, stalled, steps, now);
    const name = reconcilerName(sync.kind, sync.namespace, sync.name);
    const generation = observed ? (raw.metadata.generation ?? 0) : current["observedGeneration"];
    if (conditions === undefined && current["reconciler"] === name && current["observedGeneration"] === generation)
      return undefined;
    return {
      ...current,
      reconciler: name,
      ...(generation === undefined ? {} : { observedGeneration: generation }),
      ...(conditions === undefined ? {} : { conditions }),
    };
  });
}

/**
 * The OverridesIgnored warning: True naming the containers of spec.override that no driftless
 * container takes (container-overrides.ts), removed when there are none. Written only on a change.
 */
export async function reportIgnoredOverrides(
  client: KubeClient,
  sync: SyncRef,
  unknownContainers: readonly string[],
): Promise<void> {
  await writeStatus(client, sync, (_raw, current) => {
    const type = SyncConditionType.OverridesIgnored;
    const result =
      unknownContainers.length === 0
        ? removeCondition(current.conditions, type)
        : setCondition(
            current.conditions,
            {
              type,
              status: "True",
              reason: "UnknownContainer",
              message: `spec.override names container(s) ${unknownContainers.map((n) => `"${n}"`).join(", ")}, which driftless does not run, so their settings apply nowhere; known: reconciler, hydration-controller, git-sync, oci-sync, helm-sync, gcenode-askpass-sidecar, otel-agent`,
            },
            new Date(),
          );
    return result.changed ? { ...current, conditions: [...result.conditions] } : undefined;
  });
}
