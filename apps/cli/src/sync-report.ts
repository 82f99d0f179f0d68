import { Defaults, ErrorSourceRef, isSuspended, redactCredentials, redactUrl } from "@driftless/api";
import type { KubeObject } from "@driftless/kube";

/**
 * What `driftless status` knows of one sync, and the shape `-o json|yaml` prints (one entry of
 * `{ "syncs": [...] }`). Fields are only ever added, so scripts can rely on them.
 */
export interface SyncReport {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** SYNCED, SYNCING, PENDING, ERROR, STALLED, RECONCILING or SUSPENDED. */
  readonly state: SyncState;
  /** Where the sync reads from, credentials masked. */
  readonly source: SourceReport;
  /**
   * The commit each phase last worked on ("" when it has not yet); `lastSynced` is the last one synced without
   * errors; `syncing` the Syncing condition's, the commit `nomos status` shows and the COMMIT column.
   */
  readonly commits: {
    readonly source: string;
    readonly rendering: string;
    readonly sync: string;
    readonly lastSynced: string;
    readonly syncing: string;
  };
  /** When the sync phase last reported (RFC 3339; "" before the first pass). */
  readonly lastSyncTime: string;
  /** As `nomos status` counts them: a stalled sync's are its stall's (its summary, or the stall as one error). */
  readonly errorCount: number;
  /**
   * The errors the status lists (it may list fewer than errorCount), with Config Sync's KNV codes: those of the
   * status blocks the Syncing condition names (its commit's); while stalled, those of the Stalled condition
   * only, or its message (code "") when it lists none.
   */
  readonly errors: readonly ErrorReport[];
  /** The manager's Stalled condition, when True: the reconciler cannot be set up or keeps failing. */
  readonly stalled?: { readonly reason: string; readonly message: string };
  /** `driftless.dev/suspend` holds the sync: what its last comparison with the source found. */
  readonly suspended?: { readonly message: string };
  /** The Syncing condition's message (the Suspended condition's while suspended). */
  readonly message?: string;
  /** Every condition on status, as written (messages with credentials masked). */
  readonly conditions: readonly ConditionReport[];
  /** With --resources: the managed objects from the sync's ResourceGroup, with their kstatus. */
  readonly resources?: readonly ResourceReport[];
}

export const SyncState = {
  Synced: "SYNCED",
  Syncing: "SYNCING",
  Pending: "PENDING",
  Error: "ERROR",
  Stalled: "STALLED",
  /** The manager is still setting the reconciler up (Reconciling=True): nothing it reports is current yet. */
  Reconciling: "RECONCILING",
  Suspended: "SUSPENDED",
} as const;
export type SyncState = (typeof SyncState)[keyof typeof SyncState];

export interface SourceReport {
  readonly type: "git" | "oci" | "helm" | "unknown";
  /** `repo@branch/dir`, `image/dir` or `repo/chart@version`. */
  readonly display: string;
  readonly repo?: string;
  readonly branch?: string;
  readonly revision?: string;
  readonly image?: string;
  readonly chart?: string;
  readonly version?: string;
  readonly dir?: string;
}

export interface ConditionReport {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
  readonly message: string;
  /** RFC 3339, "" when not given. */
  readonly lastUpdateTime: string;
}

export interface ErrorReport {
  /** Which phase reported it: source, rendering, sync, or the condition type (Stalled, Reconciling). */
  readonly phase: string;
  /** `KNVxxxx`; "" when the status gives none. */
  readonly code: string;
  /** The status's errorMessage after its `KNVxxxx: `, Config Sync's link to the code's page included. */
  readonly message: string;
}

export interface ResourceReport {
  readonly group: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** kstatus (Current, InProgress, Failed, Terminating, NotFound, Unknown), or Conflict when another inventory owns it. */
  readonly status: string;
  readonly actuation?: string;
  readonly reconcile?: string;
  /** The entry's conditions (OwnershipOverlap's says who owns the object), when it has any: nomos prints their messages. */
  readonly conditions?: readonly ResourceConditionReport[];
}

export interface ResourceConditionReport {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
  readonly message: string;
}

interface RawCondition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
  commit?: string;
  errors?: RawError[];
  errorSummary?: { totalCount?: number };
  errorSourceRefs?: string[];
}
interface RawError {
  code?: string;
  errorMessage?: string;
}
interface RawPhase {
  commit?: string;
  lastUpdate?: string;
  errors?: RawError[];
  errorSummary?: { totalCount?: number };
}
interface RawStatus {
  lastSyncedCommit?: string;
  conditions?: RawCondition[];
  source?: RawPhase;
  rendering?: RawPhase;
  sync?: RawPhase;
}
interface RawSpec {
  sourceType?: string;
  git?: { repo?: string; branch?: string; revision?: string; dir?: string };
  oci?: { image?: string; dir?: string };
  helm?: { repo?: string; chart?: string; version?: string };
}

const phases = ["source", "rendering", "sync"] as const;

/** The report of one sync from its object, and the managed objects from its ResourceGroup when given. */
export function syncReport(sync: KubeObject, group?: KubeObject): SyncReport {
  const status = (sync["status"] ?? {}) as RawStatus;
  const syncing = status.conditions?.find((c) => c.type === "Syncing");
  const stalled = status.conditions?.find((c) => c.type === "Stalled" && c.status === "True");
  const suspended = suspension(sync, status);
  // As nomos status: while the reconciler is set up (a new sync, a spec change rolling out), what the last
  // one reported is not this spec's; its errors and commit are not shown, and the sync is not SYNCED.
  const reconciling =
    stalled === undefined ? status.conditions?.find((c) => c.type === "Reconciling" && c.status === "True") : undefined;
  const { errorCount, errors } =
    stalled !== undefined
      ? stallErrors(stalled)
      : reconciling !== undefined
        ? { errorCount: 0, errors: [] }
        : syncing !== undefined
          ? syncingErrors(status, syncing)
          : reportedErrors(status);
  const state: SyncState =
    stalled !== undefined
      ? SyncState.Stalled
      : reconciling !== undefined
        ? SyncState.Reconciling
        : suspended !== undefined
          ? SyncState.Suspended
          : syncing === undefined || awaitsResume(status)
            ? SyncState.Pending
            : syncing.status === "True"
              ? SyncState.Syncing
              : errorCount > 0 || errors.length > 0
                ? SyncState.Error
                : SyncState.Synced;
  const message =
    stalled !== undefined
      ? undefined
      : reconciling !== undefined
        ? reconciling.message
        : suspended !== undefined
          ? suspended.message
          : awaitsResume(status)
            ? resumedMessage
            : syncing?.message;
  return {
    kind: sync.kind,
    namespace: sync.metadata.namespace ?? "",
    name: sync.metadata.name,
    state,
    ...(suspended === undefined ? {} : { suspended: { message: suspended.message ?? "" } }),
    source: sourceReport((sync["spec"] ?? {}) as RawSpec),
    commits: {
      source: status.source?.commit ?? "",
      rendering: status.rendering?.commit ?? "",
      sync: status.sync?.commit ?? "",
      lastSynced: status.lastSyncedCommit ?? "",
      syncing: syncing?.commit ?? "",
    },
    lastSyncTime: status.sync?.lastUpdate ?? "",
    errorCount,
    errors,
    conditions: (status.conditions ?? []).map((c) => ({
      type: c.type ?? "",
      status: c.status ?? "",
      reason: c.reason ?? "",
      message: redactCredentials(c.message ?? ""),
      lastUpdateTime: c.lastUpdateTime ?? c.lastTransitionTime ?? "",
    })),
    ...(stalled === undefined
      ? {}
      : { stalled: { reason: stalled.reason ?? "", message: redactCredentials(stalled.message ?? "") } }),
    ...(message ? { message: redactCredentials(message) } : {}),
    ...(group === undefined ? {} : { resources: resourceReports(group) }),
  };
}

/** What a suspended sync says before its reconciler has compared it with the source (or while none runs). */
const unreportedSuspension =
  "Suspended by driftless.dev/suspend: nothing is applied, pruned or corrected. The reconciler has not reported on it yet";
const resumedMessage = "Resumed: waiting for the reconciler's next pass";

/**
 * The suspension of a sync, from its `driftless.dev/suspend` annotation (the user's intent, as Flux reads
 * spec.suspend), so a sync no reconciler has seen suspended yet, or none runs for, is SUSPENDED too; the
 * Suspended condition only adds what its last comparison found.
 */
function suspension(sync: KubeObject, status: RawStatus): RawCondition | undefined {
  if (!isSuspended(sync.metadata.annotations)) return undefined;
  const reported = status.conditions?.find((c) => c.type === "Suspended" && c.status === "True");
  return reported ?? { type: "Suspended", status: "True", message: unreportedSuspension };
}

/**
 * Resumed (no annotation) while the Suspended condition of the last pass stands: nothing was corrected since,
 * so the sync is PENDING, not the SYNCED its suspended pass's Syncing condition would read as.
 */
function awaitsResume(status: RawStatus): boolean {
  return status.conditions?.some((c) => c.type === "Suspended" && c.status === "True") === true;
}

interface ErrorsOf {
  readonly errorCount: number;
  readonly errors: ErrorReport[];
}

/**
 * Without a Syncing condition (a status Config Sync's older reconcilers wrote): the phases' errors and those
 * of any other condition that is True.
 */
function reportedErrors(status: RawStatus): ErrorsOf {
  const counted = phases.reduce((n, phase) => n + (status[phase]?.errorSummary?.totalCount ?? 0), 0);
  const errors: ErrorReport[] = [];
  for (const phase of phases) for (const e of status[phase]?.errors ?? []) errors.push(errorReport(phase, e));
  for (const c of status.conditions ?? [])
    if (c.type !== "Syncing" && c.status === "True")
      for (const e of c.errors ?? []) errors.push(errorReport(c.type ?? "", e));
  return { errorCount: Math.max(counted, errors.length), errors };
}

const phaseOfRef: ReadonlyMap<string, (typeof phases)[number]> = new Map([
  [ErrorSourceRef.Rendering, "rendering"],
  [ErrorSourceRef.Source, "source"],
  [ErrorSourceRef.Sync, "sync"],
]);

/**
 * As `nomos status` reads them: the errors of the commit the Syncing condition is about, from the status blocks
 * its errorSourceRefs name, counted by its summary. A block it does not name (a source error for a new commit
 * leaves the last apply's errors in status.sync) is not this commit's, and is left out.
 */
function syncingErrors(status: RawStatus, syncing: RawCondition): ErrorsOf {
  if (syncing.errorSummary === undefined) {
    const listed = (syncing.errors ?? []).map((e) => errorReport(syncing.type ?? "", e));
    return { errorCount: listed.length, errors: listed };
  }
  const named = (syncing.errorSourceRefs ?? []).flatMap((ref) => {
    const phase = phaseOfRef.get(ref);
    return phase === undefined ? [] : [phase];
  });
  const errors = named.flatMap((phase) => (status[phase]?.errors ?? []).map((e) => errorReport(phase, e)));
  const counted = syncing.errorSummary.totalCount ?? 0;
  // A summary of 0 is no errors, whatever the blocks hold (nomos's ConditionHasNoErrors).
  return counted === 0 ? { errorCount: 0, errors: [] } : { errorCount: Math.max(counted, errors.length), errors };
}

/**
 * A stalled sync's errors, as `nomos status` reports them: the Stalled condition's alone (the phases' are left
 * out), counted by its summary; one that lists none (Config Sync's and the manager's write none) is one error,
 * its message, whose leading `KNVxxxx: ` is its code.
 */
function stallErrors(stalled: RawCondition): ErrorsOf {
  const phase = stalled.type ?? "";
  const listed = (stalled.errors ?? []).map((e) => errorReport(phase, e));
  const errors = listed.length > 0 ? listed : [stallMessageReport(phase, stalled.message ?? "")];
  const counted = stalled.errorSummary === undefined ? 1 : (stalled.errorSummary.totalCount ?? 0);
  return { errorCount: Math.max(counted, errors.length), errors };
}

function stallMessageReport(phase: string, message: string): ErrorReport {
  const code = /^KNV(\d{4}): /.exec(message)?.[1];
  return code === undefined
    ? { phase, code: "", message: redactCredentials(message) }
    : errorReport(phase, { code, errorMessage: message });
}

function errorReport(phase: string, e: RawError): ErrorReport {
  const code = e.code === undefined ? "" : `KNV${e.code}`;
  const text = e.errorMessage ?? "";
  // errorMessage starts with "KNVxxxx: ", the code is its own field here; the rest is kept whole, as nomos status prints it.
  const message = code !== "" && text.startsWith(`${code}: `) ? text.slice(code.length + 2) : text;
  return { phase, code, message: redactCredentials(message) };
}

/** From the spec (what the sync asks for), as `nomos status` shows it; credentials never leave unmasked. */
function sourceReport(spec: RawSpec): SourceReport {
  const type = spec.sourceType ?? (spec.oci ? "oci" : spec.helm ? "helm" : spec.git ? "git" : "unknown");
  if (type === "git" && spec.git !== undefined) {
    const repo = redactUrl(spec.git.repo ?? "");
    // The ref the reconciler fetches: a revision other than HEAD, else the branch (master when unset, as nomos shows it).
    const ref =
      spec.git.revision && spec.git.revision !== Defaults.gitRevision
        ? spec.git.revision
        : spec.git.branch || Defaults.gitBranch;
    const dir = spec.git.dir ?? "";
    const shownDir = dir.replace(/^\/+/, "").replace(/^\.\/?$/, "");
    return {
      type,
      display: `${repo}@${ref}${shownDir ? `/${shownDir}` : ""}`,
      repo,
      ...(spec.git.branch ? { branch: spec.git.branch } : {}),
      ...(spec.git.revision ? { revision: spec.git.revision } : {}),
      ...(dir ? { dir } : {}),
    };
  }
  if (type === "oci" && spec.oci !== undefined) {
    const image = redactUrl(spec.oci.image ?? "");
    const dir = spec.oci.dir ?? "";
    return { type, display: `${image}${dir ? `/${dir}` : ""}`, image, ...(dir ? { dir } : {}) };
  }
  if (type === "helm" && spec.helm !== undefined) {
    const repo = redactUrl(spec.helm.repo ?? "");
    const chart = spec.helm.chart ?? "";
    const version = spec.helm.version ?? "";
    return {
      type,
      display: `${repo}/${chart}${version ? `@${version}` : ""}`,
      repo,
      chart,
      ...(version ? { version } : {}),
    };
  }
  return { type: "unknown", display: "-" };
}

interface RawResourceStatus {
  group?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  status?: string;
  actuation?: string;
  reconcile?: string;
  conditions?: { type?: string; status?: string; reason?: string; message?: string }[];
}

/** `kind.group/name` lower-cased, as `nomos status` names a managed object and orders them within a namespace. */
const typedName = (r: ResourceReport): string => `${r.kind.toLowerCase()}${r.group ? `.${r.group}` : ""}/${r.name}`;

/** nomos status's order: by namespace (cluster-scoped first), then by `kind.group/name`. */
function byNamespaceAndType(a: ResourceReport, b: ResourceReport): number {
  return compareText(a.namespace, b.namespace) || compareText(typedName(a), typedName(b));
}

/** Code unit order, as Go compares strings (no locale). */
const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function resourceReports(group: KubeObject): ResourceReport[] {
  const statuses = ((group["status"] as { resourceStatuses?: RawResourceStatus[] } | undefined)?.resourceStatuses ??
    []) as RawResourceStatus[];
  return statuses.map(resourceReport).sort(byNamespaceAndType);
}

function resourceReport(s: RawResourceStatus): ResourceReport {
  return {
    group: s.group ?? "",
    kind: s.kind ?? "",
    namespace: s.namespace ?? "",
    name: s.name ?? "",
    status: overlapped(s) ? "Conflict" : (s.status ?? "Unknown"),
    ...(s.actuation === undefined ? {} : { actuation: s.actuation }),
    ...(s.reconcile === undefined ? {} : { reconcile: s.reconcile }),
    ...(s.conditions === undefined || s.conditions.length === 0
      ? {}
      : {
          conditions: s.conditions.map((c) => ({
            type: c.type ?? "",
            status: c.status ?? "",
            reason: c.reason ?? "",
            message: redactCredentials(c.message ?? ""),
          })),
        }),
  };
}

/** Another ResourceGroup owns the object (OwnershipOverlap=True): nomos status shows it as Conflict. */
function overlapped(s: RawResourceStatus): boolean {
  return (s.conditions ?? []).some((c) => c.type === "OwnershipOverlap" && c.status === "True");
}

/** 0 when every sync is synced, 1 otherwise (pending, syncing, reconciling, errors, stalled). */
export function exitCode(reports: readonly SyncReport[]): number {
  return reports.every((r) => r.state === SyncState.Synced) ? 0 : 1;
}
