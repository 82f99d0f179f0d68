import { isDeepStrictEqual } from "node:util";
import {
  ErrorSourceRef,
  SyncConditionType,
  combineSummaries,
  kubeTime,
  reconcilerName,
  redactCredentialsIn,
  sourceStatusBlock,
  getCondition,
  removeCondition,
  setCondition,
  statusErrors,
  type ConditionInput,
  type DriftlessError,
  type ErrorResource,
  type ErrorSummary,
  type RSync,
  type SourceStatusBlock,
  type SyncCondition,
} from "@driftless/api";
import { isConflict, isNotFound, type KubeClient, type KubeObject } from "@driftless/kube";
import { declaringSourceOf, sourcePathFromRoot, type DeclaringSource, type SyncIdentity } from "@driftless/applier";
import { rsyncMapping } from "./rsync.ts";
import { describeDrift, type SuspendedDrift } from "./suspend.ts";

/** What one pass learned, as the RSync's status will say it. */
export interface PassReport {
  /** The commit the pass worked on (undefined when the fetch failed before knowing it). */
  readonly commit: string | undefined;
  /** Fetch, read and validation problems: `status.source.errors`. */
  readonly sourceErrors: readonly DriftlessError[];
  /** Apply, prune and inventory problems: `status.sync.errors`. */
  readonly syncErrors: readonly DriftlessError[];
  /** True when the pass applied the commit fully (lastSyncedCommit moves only then). */
  readonly synced: boolean;
  /**
   * The pass reached the apply: status.sync reports this commit even beside source errors (objects of an
   * unserved kind set aside), as Config Sync's update runs past its non-blocking parse errors.
   */
  readonly reachedApply?: true;
  /** `status.rendering`, once the pass knew its commit: Config Sync's message and KNV1068 errors. */
  readonly rendering?: { readonly message: string; readonly errors: readonly DriftlessError[] };
  /** Set when the sync is suspended; `drift` once the source was read: what a pass would change (nothing was). */
  readonly suspension?: { readonly drift?: SuspendedDrift };
  /** Where the declarations came from, once known: errors name their files from the repository root. */
  readonly declaringSource?: DeclaringSource;
}

/**
 * Config Sync fills `errorResources[].sourcePath` from the object's source-path annotation: the file's
 * path from the repository root (the sync's directory included), as driftless writes that annotation too.
 */
function rootedSourcePaths(
  sync: RSync | undefined,
  report: PassReport,
): ((resource: ErrorResource) => string) | undefined {
  const source = report.declaringSource ?? (sync === undefined ? undefined : declaringSourceOf(sync));
  if (source === undefined) return undefined;
  return (resource) => {
    const sourcePath = resource.sourcePath ?? "";
    if (sourcePath === "" || resource.sourcePathRooted === true) return sourcePath;
    // A rendered object's file is named from its apiVersion, which an error about an id alone does not carry.
    const rendered =
      resource.version === undefined || resource.version === "" ? { ...source, rendered: undefined } : source;
    const apiVersion = resource.group === "" ? `${resource.version}` : `${resource.group}/${resource.version}`;
    const id = {
      group: resource.group,
      kind: resource.kind,
      name: resource.name,
      ...(resource.namespace ? { namespace: resource.namespace } : {}),
    };
    return sourcePathFromRoot(rendered, { id, apiVersion, sourcePath });
  };
}

type Status = { [key: string]: unknown; conditions?: SyncCondition[] };

/**
 * Whether the pass writes status.sync: it got to the apply (a failed render, a suspension or a source error
 * stops it first, unless only objects set aside for their kind failed). Otherwise status.sync keeps what the
 * last real sync said, and so do the metrics read from it.
 */
export function reportsSyncPhase(report: PassReport): boolean {
  const renderFailed = (report.rendering?.errors.length ?? 0) > 0;
  return (
    !renderFailed &&
    report.suspension === undefined &&
    (report.sourceErrors.length === 0 || report.reachedApply === true)
  );
}

/**
 * Most bytes of status written with every error listed. etcd keeps an object under 1.5 MiB (spec and
 * metadata included): past this, each error list is halved until it fits, as Config Sync's status
 * writes retry with a doubled denominator when the API server refuses them for size.
 */
export const StatusBudgetBytes = 1024 * 1024;

/** The status the RSync should carry after `report`; times change only where content does. */
export function nextStatus(
  identity: SyncIdentity,
  sync: RSync | undefined,
  current: Status,
  report: PassReport,
  now: Date,
): Status {
  for (let denominator = 1; ; denominator *= 2) {
    const status = statusOfPass(identity, sync, current, report, now, denominator);
    // A list cut to nothing cannot shrink further: what is left is the rest of the status.
    const smallest = denominator >= 1 << 20;
    if (smallest || Buffer.byteLength(JSON.stringify(status)) <= StatusBudgetBytes) return status;
  }
}

/** `nextStatus` with each error list cut to 1/denominator of its errors (Config Sync's truncation). */
function statusOfPass(
  identity: SyncIdentity,
  sync: RSync | undefined,
  current: Status,
  report: PassReport,
  now: Date,
  denominator: number,
): Status {
  const status: Status = { ...current };
  const time = kubeTime(now);
  const sourcePathOf = rootedSourcePaths(sync, report);
  const source = sync === undefined ? undefined : sourceStatusBlock(sync);
  const phase = (
    errors: readonly DriftlessError[],
    previous: unknown,
    extra: Record<string, unknown> = {},
  ): Record<string, unknown> => {
    const { errors: list, errorSummary } = statusErrors(errors, {
      denominator,
      ...(sourcePathOf === undefined ? {} : { sourcePathOf }),
    });
    const next: Record<string, unknown> = {
      ...source,
      // Config Sync's `commit` is omitempty: a fetch that failed before knowing the commit writes none.
      ...(report.commit === undefined || report.commit === "" ? {} : { commit: report.commit }),
      ...extra,
      errorSummary,
    };
    if (list !== undefined) next["errors"] = list;
    const prev = (previous ?? {}) as Record<string, unknown>;
    const { lastUpdate: _ignored, ...prevContent } = prev;
    // lastUpdate says when this block last changed, so an unchanged pass writes nothing.
    return isDeepStrictEqual(prevContent, next) && typeof prev["lastUpdate"] === "string"
      ? prev
      : { ...next, lastUpdate: time };
  };
  status["observedGeneration"] = (sync?.metadata.generation ?? current["observedGeneration"] ?? 0) as number;
  status["reconciler"] = reconcilerName(identity.kind, identity.namespace, identity.name);
  const rendering = report.rendering;
  if (rendering !== undefined)
    status["rendering"] = phase(rendering.errors, current["rendering"], { message: rendering.message });
  // A failed render stops the pass before the source is read: status.source names the commit fetched,
  // with no errors (as Config Sync writes it after the fetch), and status.sync keeps what it said.
  const renderFailed = rendering !== undefined && rendering.errors.length > 0;
  status["source"] = phase(renderFailed ? [] : report.sourceErrors, current["source"]);
  // A suspended pass applied nothing, nor one its source errors stopped: status.sync keeps saying what the
  // last real sync did. Objects set aside for their kind stop nothing else, so the apply is reported.
  const suspended = report.suspension;
  const syncReported = reportsSyncPhase(report);
  if (syncReported) status["sync"] = phase(report.syncErrors, current["sync"]);
  if (report.synced && report.commit !== undefined) status["lastSyncedCommit"] = report.commit;

  const failing = renderFailed
    ? rendering.errors
    : report.sourceErrors.length > 0
      ? report.sourceErrors
      : report.syncErrors;
  const summary = statusErrors(failing, { denominator });
  const { conditions: syncing } = setCondition(
    current.conditions,
    renderFailed
      ? {
          // Config Sync's rendering condition: reason Rendering, the rendering message.
          type: SyncConditionType.Syncing,
          status: "False",
          reason: "Rendering",
          message: rendering.message,
          commit: report.commit ?? "",
          errorSourceRefs: [ErrorSourceRef.Rendering],
          errorSummary: summary.errorSummary,
        }
      : suspended !== undefined && failing.length === 0
        ? {
            type: SyncConditionType.Syncing,
            status: "False",
            reason: "Suspended",
            message: "Suspended",
            commit: report.commit ?? "",
          }
        : syncReported
          ? {
              // Config Sync's messages: "Sync Completed" whether or not the sync had errors.
              type: SyncConditionType.Syncing,
              status: "False",
              reason: "Sync",
              message: "Sync Completed",
              commit: report.commit ?? "",
              ...errorsOfCommit(status, report.commit ?? ""),
            }
          : {
              type: SyncConditionType.Syncing,
              status: "False",
              reason: report.sourceErrors.length > 0 ? "Source" : "Sync",
              message: report.sourceErrors.length > 0 ? "Source" : "Sync Completed",
              commit: report.commit ?? "",
              errorSourceRefs: [report.sourceErrors.length > 0 ? ErrorSourceRef.Source : ErrorSourceRef.Sync],
              errorSummary: summary.errorSummary,
            },
    now,
  );
  status.conditions = [...suspendedCondition(syncing, report, now)];
  return status;
}

/**
 * The status while a pass applies `report.commit`, as Config Sync's reconciler rewrites it every 5 s while
 * syncing: status.source, status.rendering and status.sync name the commit and spec being applied, with the
 * errors met so far, and Syncing stays True. Blocks whose content is unchanged keep their lastUpdate.
 */
export function applyingStatus(
  identity: SyncIdentity,
  sync: RSync,
  current: Status,
  report: PassReport,
  now: Date,
): Status {
  const status = nextStatus(identity, sync, current, { ...report, synced: false, reachedApply: true }, now);
  const commit = report.commit ?? "";
  const { conditions } = setCondition(current.conditions, syncingTrue(status, commit), now);
  return { ...status, conditions: [...conditions] };
}

/** Syncing=True for `commit`, as Config Sync writes it while it syncs, with the errors `status` holds for that commit. */
function syncingTrue(status: Status, commit: string): ConditionInput {
  return {
    type: SyncConditionType.Syncing,
    status: "True",
    reason: "Sync",
    message: "Syncing",
    commit,
    ...errorsOfCommit(status, commit),
  };
}

/**
 * As Config Sync's summary once status.sync is written: every status block of `commit` that has errors,
 * in the order source, rendering, sync, and their counts summed (a block of another commit is left out).
 */
function errorsOfCommit(
  status: Status,
  commit: string,
): { errorSourceRefs: ErrorSourceRef[]; errorSummary: ErrorSummary } {
  const blocks = [
    [ErrorSourceRef.Source, status["source"]],
    [ErrorSourceRef.Rendering, status["rendering"]],
    [ErrorSourceRef.Sync, status["sync"]],
  ] as const;
  const failing = blocks.flatMap(([ref, block]) => {
    const phase = (block ?? {}) as { commit?: unknown; errors?: unknown[]; errorSummary?: ErrorSummary };
    return (phase.commit ?? "") === commit && (phase.errors?.length ?? 0) > 0
      ? [{ ref, summary: phase.errorSummary }]
      : [];
  });
  return {
    errorSourceRefs: failing.map((f) => f.ref),
    errorSummary: combineSummaries(failing.map((f) => f.summary)),
  };
}

/**
 * driftless's Suspended condition: True with what differs while suspended, gone once resumed. A
 * pass that could not read the source keeps the last comparison (the suspension itself still holds).
 */
function suspendedCondition(
  conditions: readonly SyncCondition[],
  report: PassReport,
  now: Date,
): readonly SyncCondition[] {
  const suspension = report.suspension;
  if (suspension === undefined) return removeCondition(conditions, SyncConditionType.Suspended).conditions;
  const drift = suspension.drift;
  if (drift === undefined && getCondition(conditions, SyncConditionType.Suspended) !== undefined) return conditions;
  return setCondition(
    conditions,
    {
      type: SyncConditionType.Suspended,
      status: "True",
      reason: "Suspended",
      message:
        drift === undefined
          ? "Suspended by driftless.dev/suspend: nothing is applied, pruned or corrected. The source could not be compared yet"
          : describeDrift(drift, report.commit),
      commit: report.commit ?? "",
    },
    now,
  ).conditions;
}

/**
 * Marks a pass in progress on a new commit or spec (Syncing=True). A pass over the synced commit
 * writes nothing, nor does a retry of a commit whose failure status already reports for this spec:
 * flipping Syncing to True and back cost every retry of a failing commit two writes and two Events.
 */
export function syncingStatus(
  current: Status,
  commit: string,
  generation: number | undefined,
  now: Date,
  source?: SourceStatusBlock,
): Status | undefined {
  if (current["lastSyncedCommit"] === commit) return undefined;
  const reported = getCondition(current.conditions, SyncConditionType.Syncing);
  if (reported?.status === "False" && reported.commit === commit && current["observedGeneration"] === generation)
    return undefined;
  // As Config Sync's: the errors already reported for this commit (a retry of a failing one) stay summarised.
  const { conditions, changed } = setCondition(current.conditions, syncingTrue(current, commit), now);
  // Config Sync writes status.source once the fetch brings a new commit (no errors known yet for it).
  const fetched = (current["source"] ?? {}) as Record<string, unknown>;
  const newSource =
    source !== undefined && fetched["commit"] !== commit
      ? { ...source, commit, errorSummary: {}, lastUpdate: kubeTime(now) }
      : undefined;
  if (!changed && newSource === undefined) return undefined;
  return { ...current, ...(newSource === undefined ? {} : { source: newSource }), conditions: [...conditions] };
}

/**
 * The RSync status a reconciler last read or wrote. A copy of the RSync from its watch whose status
 * still says exactly this is current for our purpose: the watch has caught up with our own last
 * write and nobody has changed status since. Then a pass whose status would not change needs no
 * GET (a failing commit's retries cost two GETs each otherwise).
 */
export class KnownStatus {
  #status: unknown;

  remember(status: unknown): void {
    this.#status = status ?? {};
  }

  /** Nothing is known: a write went unanswered (a timeout) and may or may not have been stored. */
  forget(): void {
    this.#status = undefined;
  }

  /** True when `raw` (from the watch) holds the status last read or written. */
  describes(raw: KubeObject): boolean {
    return this.#status !== undefined && isDeepStrictEqual(this.#status, raw["status"] ?? {});
  }
}

/** A copy of the RSync a pass already holds, and what this reconciler knows its status to be. */
export interface HeldSync {
  readonly raw: KubeObject;
  readonly known: KnownStatus;
}

/**
 * Writes status through the status subresource when it differs from what the object holds.
 * Re-reads and recomputes on 409 (the manager or a user may have written meanwhile). Every string
 * is redacted here, the one way into status, so no URL credentials reach it whoever built it. With
 * `held`, a held copy that `known` describes and that `compute` leaves as it is ends it without a read.
 */
export async function writeStatus(
  client: KubeClient,
  identity: SyncIdentity,
  compute: (raw: KubeObject, current: Status) => Status | undefined,
  held?: HeldSync,
): Promise<boolean> {
  if (held !== undefined && held.known.describes(held.raw) && statusChange(held.raw, compute) === undefined)
    return false;
  const mapping = rsyncMapping(identity.kind);
  for (let attempt = 0; attempt < 5; attempt++) {
    const raw = await client.get(mapping, identity.namespace, identity.name);
    if (raw === undefined) return false;
    const next = statusChange(raw, compute);
    if (next === undefined) {
      held?.known.remember(raw["status"]);
      return false;
    }
    try {
      const written = await client.replaceStatus(mapping, { ...raw, status: next });
      held?.known.remember(written["status"]);
      return true;
    } catch (error) {
      // A write that timed out may still be stored: a held copy no longer says what the server holds.
      held?.known.forget();
      if (isNotFound(error)) return false;
      if (!isConflict(error) || attempt === 4) throw error;
    }
  }
  return false;
}

/** The status `compute` wants for `raw`, redacted; undefined when `raw` already holds it. */
function statusChange(
  raw: KubeObject,
  compute: (raw: KubeObject, current: Status) => Status | undefined,
): Status | undefined {
  const current = (raw["status"] ?? {}) as Status;
  const computed = compute(raw, current);
  const next = computed === undefined ? undefined : redactCredentialsIn(computed);
  // The API server returns keys in its own order: compare structurally, not as text.
  return next === undefined || isDeepStrictEqual(next, current) ? undefined : next;
}
