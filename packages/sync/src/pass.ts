import {
  DriftlessError,
  ErrorClass,
  KnvCode,
  allowsEmptySource,
  isSuspended,
  pendingSyncRequest,
  reconcileTimeoutMsOf,
  SourceType,
  sourceStatusBlock,
  toDriftlessError,
  type RSync,
} from "@driftless/api";
import {
  applyPlan,
  idKey,
  isManagementDisabled,
  plan,
  crdRemovalErrors,
  prune,
  settleApplied,
  settlePruned,
  toDesired,
  declaringSourceOf,
  renderedSourceOf,
  type ApplyOutcome,
  type DesiredObject,
  type ObjectId,
  type PruneOutcome,
} from "@driftless/applier";
import type { FetchResult } from "@driftless/git";
import { withSpecialNamespacesDetached } from "@driftless/source";
import type { KubeObject } from "@driftless/kube";
import type { PassContext } from "./context.ts";
import { readGitCredentials } from "./credentials.ts";
import { withImplicitNamespaces } from "./implicit-namespaces.ts";
import { memoryMiB } from "./memory.ts";
import { deletesAllNamespaces } from "./namespace-safeguard.ts";
import { loadSync, type LoadedSync } from "./rsync.ts";
import { recordEvent, SyncEventReason } from "./events.ts";
import { applyingStatus, nextStatus, syncingStatus, writeStatus, type PassReport } from "./status.ts";
import { startSyncProgress, type SyncProgress } from "./sync-progress.ts";
import { recordDynamicNsSelector, recordImageToSync } from "./own-annotations.ts";
import { RenderingMessage } from "./render.ts";
import { measureDrift } from "./suspend.ts";
import { selfReconcileErrors } from "./self-reconcile.ts";
import { recordSyncRequestHandled } from "./sync-request.ts";
import { revisionOf } from "./revision.ts";
import { unrecordedApplies } from "./unrecorded-applies.ts";

/** What triggered a pass; `drift` re-applies the last source without touching Git. */
export type PassTrigger = "poll" | "webhook" | "drift" | "manager" | "startup" | "retry";

export interface PassResult extends PassReport {
  /** What the pass declared from (revisionOf), once fetched. */
  readonly revision?: string;
  /** What the source declared, when it read completely (the remediator guards exactly this). */
  readonly declared?: readonly DesiredObject[];
  /**
   * How many objects a commit the all-Namespaces failsafe refused declares: Config Sync records
   * declared_resources after parsing, before that failsafe, so the refused commit is counted though not declared.
   */
  readonly refusedDeclaredCount?: number;
  /** Seconds spent in each step, for the pass log line and benchmarks. */
  readonly phases?: Readonly<Record<string, number>>;
  readonly applied: readonly ApplyOutcome[];
  readonly pruned: readonly PruneOutcome[];
  readonly skipped?: "sync-missing" | "sync-deleting" | "unchanged" | "superseded";
  /** The pass's status write failed: status does not say what it did, so the pass is not complete. */
  readonly statusUnwritten?: true;
}

/**
 * Whether an object's failed apply holds back this pass's prune: a failure the next pass may not repeat
 * (retryable), or a kind the cluster does not serve (Config Sync refuses such a source as a whole). An
 * object the API server refuses for good (invalid, forbidden, immutable) or another sync holds (KNV1060)
 * does not: as in Config Sync, what else left Git is still pruned, or it would never be while the error stays.
 */
function holdsPrune(error: DriftlessError): boolean {
  return error.errorClass === ErrorClass.Retry || error.code === KnvCode.UnknownObjectKind;
}

/** Refusing to delete everything because the source suddenly declares nothing (KNV2006). */
export class EmptySourceError extends DriftlessError {
  constructor(managed: number) {
    super({
      code: KnvCode.EmptySource,
      errorClass: ErrorClass.Terminal,
      message: `the source declares no objects but ${managed} are managed; refusing to delete them all. If this is intended, annotate the sync with configsync.gke.io/allow-empty-source: "true"`,
    });
  }
}

/**
 * One reconcile pass. Level-triggered: recomputes everything from the RSync, Git and the cluster.
 * Nothing is pruned unless the source read completely and every object applied.
 */
export async function runPass(ctx: PassContext, trigger: PassTrigger, preloaded?: LoadedSync): Promise<PassResult> {
  // The status is written last, on every way out of the steps: its outcome comes back beside them.
  const status = { unwritten: false };
  const result = await passSteps(ctx, trigger, preloaded, status);
  return status.unwritten ? { ...result, statusUnwritten: true } : result;
}

async function passSteps(
  ctx: PassContext,
  trigger: PassTrigger,
  preloaded: LoadedSync | undefined,
  status: { unwritten: boolean },
): Promise<PassResult> {
  const started = performance.now();
  const phases: Record<string, number> = {};
  let mark = started;
  const lap = (phase: string): void => {
    const now = performance.now();
    phases[phase] = Math.round(now - mark) / 1000;
    mark = now;
    // Which step a pass's memory peak comes from (LOG_LEVEL=debug).
    if (ctx.log.enabled("debug"))
      ctx.log.debug("pass phase finished", { phase, seconds: phases[phase], memoryMiB: memoryMiB() });
  };
  let result: PassResult = {
    commit: undefined,
    sourceErrors: [],
    syncErrors: [],
    synced: false,
    applied: [],
    pruned: [],
  };
  let sync: RSync | undefined;
  let raw: KubeObject | undefined;
  /** `driftless.dev/sync-requested-at` not yet answered when the pass began: this pass answers it. */
  let request: string | undefined;
  /** Status updates while the apply runs, and the apply errors they report once known. */
  let progress: SyncProgress | undefined;
  let applyErrorsSoFar: readonly DriftlessError[] = [];
  try {
    const loaded = preloaded ?? (await loadSync(ctx.client, ctx.identity));
    if (loaded === undefined) return { ...result, skipped: "sync-missing" };
    if (loaded.raw.metadata.deletionTimestamp !== undefined) return { ...result, skipped: "sync-deleting" };
    raw = loaded.raw;
    request = pendingSyncRequest(raw.metadata.annotations);
    if (loaded.sync === undefined) {
      result = { ...result, sourceErrors: loaded.invalid.map((e) => toDriftlessError(e, KnvCode.InvalidSync)) };
      return result;
    }
    sync = loaded.sync;
    const suspended = isSuspended(sync.metadata.annotations);
    if (suspended) result = { ...result, suspension: {} };

    // git ls-remote; fetch and check out only on a new commit. A requested pass asks the source even after drift.
    const fetched = await fetchSource(ctx, sync, request !== undefined && trigger === "drift" ? "manager" : trigger);
    const revision = revisionOf(fetched);
    result = { ...result, commit: fetched.commit, revision };
    // The artifact about to be synced, for signature-verification webhooks; a refusal stops the pass here.
    await recordImageToSync(ctx.client, ctx.identity, raw, sync, fetched.commit);
    lap("fetch");
    // An unchanged poll or webhook push skips the apply, unless someone asked for a pass: then it runs in full.
    if (ctx.beginCommit(trigger, revision, raw.metadata.generation) && request === undefined) {
      result = { ...result, skipped: "unchanged" };
      return result;
    }
    const generation = raw.metadata.generation;
    const fetchedSource = sourceStatusBlock(sync);
    if (
      !suspended &&
      (await writeStatus(
        ctx.client,
        ctx.identity,
        (_raw, current) => syncingStatus(current, fetched.commit, generation, new Date(), fetchedSource),
        { raw, known: ctx.knownStatus },
      ))
    ) {
      await recordEvent(
        ctx.client,
        ctx.identity,
        raw,
        SyncEventReason.Started,
        `Syncing commit ${fetched.commit}`,
        ctx.log,
      );
    }

    // kustomize build when the directory holds a kustomization; a failed render stops here, before any prune.
    const rendered = await ctx.render(fetched, sync);
    result = { ...result, rendering: rendered.rendering };
    lap("render");
    if (rendered.source === undefined) return result;
    const source = await ctx.readSource(rendered.source, sync); // parse and validate; a failed read stops here
    lap("read");
    if (!source.complete) {
      result = { ...result, sourceErrors: source.errors };
      // Errors about rendered objects then name the file kustomize build --output writes each to (as the
      // annotations of a complete read do, and Config Sync, which reads that folder), not rendered.yaml.
      if (rendered.rendering.message === RenderingMessage.Succeeded)
        result = { ...result, declaringSource: renderedSourceOf(sync, source.namespaces ?? [], ctx.clusterName) };
      return result;
    }
    if (ctx.identity.kind === "RootSync" && ctx.sourceSelectsDynamically !== undefined)
      await recordDynamicNsSelector(ctx.client, ctx.identity, raw, ctx.sourceSelectsDynamically);
    const selfDeclared = selfReconcileErrors(ctx.identity, source.objects);
    if (selfDeclared.length > 0) {
      result = { ...result, sourceErrors: selfDeclared };
      return result;
    }
    // Namespaces the objects use but the source does not declare (namespaceStrategy: implicit).
    // and the special Namespaces (kube-system, default, ...) marked to be detached, never deleted.
    const objects = await withImplicitNamespaces(
      ctx.client,
      ctx.identity,
      sync,
      withSpecialNamespacesDetached(source.objects),
    );
    const declaringSource = declaringSourceOf(
      sync,
      rendered.rendering.message === RenderingMessage.Succeeded ? source.objects : undefined,
      ctx.clusterName,
    );
    const desired = objects.map((object) => toDesired(object, declaringSource));
    result = { ...result, declaringSource };
    // What the remediator guards and the watch caches keep: the new declaration, once no failsafe refuses
    // it. A refused commit leaves them on the previous one, as Config Sync keeps its last declared set.
    // Objects set aside for their kind (KNV1021) stay declared, as Config Sync keeps them.
    const setAside: readonly ObjectId[] = source.setAside.flatMap((e) => e.resources);
    const declare = (): void => {
      result = { ...result, declared: desired };
      ctx.declaring?.(desired, setAside);
    };
    const fights = ctx.activeFights();
    // An object in a fight is still declared (never pruned) but not re-applied until the pause ends.
    const toApply = fights.size === 0 ? desired : desired.filter((d) => !fights.has(idKey(d.id)));
    const inventory = ctx.inventory;
    const previous = await inventory.read();
    if (source.isEmpty && previous.length > 0 && !allowsEmptySource(sync.metadata.annotations)) {
      // Config Sync's own failsafe, where it applies, is reported as Config Sync reports it (status.sync).
      const allNamespaces = deletesAllNamespaces(previous, desired);
      result =
        allNamespaces === undefined
          ? { ...result, sourceErrors: [new EmptySourceError(previous.length)] }
          : { ...result, syncErrors: [allNamespaces], refusedDeclaredCount: desired.length };
      return result;
    }
    if (suspended) {
      declare();
      // Suspended: what a pass would write and delete, found by the same match, and nothing done.
      const drift = await measureDrift(desired, previous, ctx.applyOptions(fetched.commit));
      lap("compare");
      result = { ...result, suspension: { drift } };
      return result;
    }
    const allNamespaces = deletesAllNamespaces(previous, desired);
    if (allNamespaces !== undefined) {
      result = { ...result, syncErrors: [allNamespaces], refusedDeclaredCount: desired.length };
      return result;
    }
    // A CRD leaving the source with custom resources of it still declared (KNV1047): nothing is applied.
    const crdRemoval = await crdRemovalErrors(ctx.client, previous, desired);
    if (crdRemoval.length > 0) {
      result = { ...result, sourceErrors: crdRemoval };
      return result;
    }
    // A new spec came while the pass fetched, rendered or read: nothing of the old commit is applied.
    if (ctx.superseded.aborted) {
      result = { ...result, skipped: "superseded" };
      return result;
    }
    declare();
    // From here the commit is applied: objects set aside for their kind are reported (status.source) beside
    // what the apply meets (status.sync), even if a later step throws.
    result = { ...result, sourceErrors: source.setAside, reachedApply: true };
    const [applying, held] = [sync, raw];
    progress = startSyncProgress(
      async () => {
        // A pass being stopped or superseded writes no status, as its end writes none.
        if (ctx.signal.aborted || ctx.superseded.aborted) return;
        const report = { ...result, syncErrors: applyErrorsSoFar };
        const now = new Date();
        await writeStatus(
          ctx.client,
          ctx.identity,
          (_raw, current) => applyingStatus(ctx.identity, applying, current, report, now),
          { raw: held, known: ctx.knownStatus },
        );
      },
      (error) => ctx.log.warn("status write while syncing failed", { error: String(error) }),
    );

    // `managed: disabled` declarations are released, not owned: they leave the inventory, so
    // removing their files later deletes nothing.
    const declaredOwned = desired.filter((d) => !isManagementDisabled(d.object)).map((d) => d.id);
    const declared = new Set(desired.map((d) => idKey(d.id)));
    // None of a kind set aside is a prune candidate.
    const setAsideKinds = new Set(setAside.map((id) => `${id.group}/${id.kind}`));
    const candidates = previous.filter(
      (id) => !declared.has(idKey(id)) && !setAsideKinds.has(`${id.group}/${id.kind}`),
    );
    // CRDs, Namespaces, then the rest; depends-on as a DAG over what is applied and what is pruned.
    const ordered = plan(toApply, candidates);
    // Nothing of an invalid commit (an external dependency) is applied: its new objects are not recorded either.
    const recordedBefore = new Set(previous.map(idKey));
    const owned = ordered.invalid ? declaredOwned.filter((id) => recordedBefore.has(idKey(id))) : declaredOwned;
    inventory.statusMode = sync.spec.override?.statusMode === "disabled" ? "disabled" : "enabled";
    // Old ∪ new first, so a crash never forgets an object; but not what the last pass saw refused (a retry
    // refused again would write the ResourceGroup twice): one accepted now is recorded right after the apply.
    const refusedBefore = ctx.unrecordedCreates;
    const recordFirst = refusedBefore === undefined ? owned : owned.filter((id) => !refusedBefore.has(idKey(id)));
    await inventory.write([...previous, ...recordFirst]);
    lap("plan");
    const applyOptions = ctx.applyOptions(fetched.commit);
    const reconcileTimeoutMs = reconcileTimeoutMsOf(sync.spec.override);
    // A dependency's wait (depends-on) ends too on a new spec, as the wait after apply does, and no later
    // wave starts: the pass on the new spec applies its own.
    const applySignal = AbortSignal.any([applyOptions.signal ?? ctx.signal, ctx.superseded]);
    const halt = ctx.superseded;
    const written = await applyPlan(ordered, { ...applyOptions, reconcileTimeoutMs, signal: applySignal, halt });
    applyErrorsSoFar = [...ordered.errors, ...written.flatMap((o) => (o.error ? [o.error] : []))];
    // A new object the server refused, or that was never sent, is not recorded (Config Sync's inventory task).
    const unrecorded = unrecordedApplies(written, previous);
    const recorded = (id: ObjectId): boolean => !unrecorded.has(idKey(id));
    const acceptedNow = owned.filter((id) => refusedBefore?.has(idKey(id)) === true && recorded(id));
    if (acceptedNow.length > 0) await inventory.write([...previous, ...recordFirst, ...acceptedNow]);
    refusedBefore?.clear();
    for (const key of unrecorded) refusedBefore?.add(key);
    lap("apply");
    // As Config Sync's applier: the pass waits for what it wrote to become Current (override.reconcileTimeout).
    const { outcomes: applied, timedOut } = await settleApplied(written, {
      live: applyOptions.live,
      pods: applyOptions.client,
      timeoutMs: reconcileTimeoutMs,
      signal: ctx.waitSignal,
      unchanged: ctx.reconcileTimeouts.waitsForUnchanged,
    });
    // A new spec came while the pass waited: the pass on it prunes from the inventory just written (old ∪ new)
    // and writes the status; this one's would name a spec that no longer holds.
    if (ctx.superseded.aborted) {
      // Less what the server refused: recorded now, a refusal on the new spec would find it "previous" and keep it.
      if (recordFirst.some((id) => !recorded(id)))
        await inventory.write([...previous, ...recordFirst.filter(recorded), ...acceptedNow]);
      result = { ...result, applied, skipped: "superseded" };
      return result;
    }
    if (timedOut.length > 0) logReconcileTimeout(ctx, timedOut, reconcileTimeoutMs);
    // Reported (KNV2009) but not holding back the prune: the objects were applied, only not yet Current.
    const waitErrors = ctx.reconcileTimeouts.errors(applied, timedOut, reconcileTimeoutMs);
    lap("wait");
    const applyErrors = [...ordered.errors, ...applied.flatMap((o) => (o.error ? [o.error] : []))];

    // A half-applied commit must not also delete what it replaced, while the apply may yet succeed.
    const pruneHeld = ordered.invalid || applied.some((o) => o.error !== undefined && holdsPrune(o.error));
    // A dependency waits for its deleted dependents as long as an applied object may take to be Current.
    const pruneOptions = { ...ctx.pruneOptions(), dependentsTimeoutMs: reconcileTimeoutMs, signal: ctx.waitSignal };
    const pruneStarted = performance.now();
    const pruned = pruneHeld ? [] : await prune(candidates, { ...pruneOptions, heldForDependents: ordered.pruneHolds });
    // As Config Sync's applier: the pass ends once what it deleted is gone (finalizers), or at reconcileTimeout,
    // counted from the prune's start: a dependent already waited for (depends-on) is not waited for twice.
    const lingering = await settlePruned(pruned, {
      ...pruneOptions,
      timeoutMs: reconcileTimeoutMs - (performance.now() - pruneStarted),
      onWait: (ids) => logPruneWait(ctx, "waiting for pruned objects to be deleted", ids),
    });
    if (lingering.length > 0 && !ctx.signal.aborted && !ctx.superseded.aborted)
      logPruneWait(ctx, "prune reconcile timeout: deleted objects still there", lingering);
    const pruneErrors = pruned.flatMap((o) => (o.error ? [o.error] : []));
    // As Config Sync's inventory keeps a timed-out prune: still tracked, and holding its depends-on dependencies.
    const kept = [...pruned.filter((o) => o.error !== undefined).map((o) => o.id), ...lingering];
    const notYetPruned = pruneHeld ? candidates : [];
    await inventory.write([...owned.filter(recorded), ...kept, ...notYetPruned]);
    lap("prune");
    if (ctx.superseded.aborted) {
      result = { ...result, applied, pruned, skipped: "superseded" };
      return result;
    }
    // Kept live between passes; what the prune left in the inventory is tracked too (strategy Delete).
    const recordedApplies = applied.filter((o) => recorded(o.desired.id));
    await ctx.resourceGroupStatus.afterPass(recordedApplies, fetched.commit, ctx.reconcileTimeouts.stuck, {
      pruned,
      lingering,
      held: notYetPruned,
    });
    lap("inventory");

    // A type the reconciler may read but not watch (RBAC): its drift goes unseen until a full pass.
    const watchRefusals = applyOptions.live.watchRefusals?.() ?? [];
    const failures = [...applyErrors, ...pruneErrors, ...fights.values(), ...watchRefusals];
    // The commit counts as synced despite a wait timeout (it is applied: lastSyncedCommit moves and the
    // remediator guards it); the timeout is still on status.sync.errors until the object is Current.
    const syncErrors = [...failures, ...waitErrors];
    // The commit is not synced until the objects set aside for their kind are applied too.
    result = {
      ...result,
      syncErrors,
      synced: failures.length === 0 && source.setAside.length === 0,
      applied,
      pruned,
    };
    return result;
  } catch (error) {
    // Cut short for a pass on the new spec: what it met says nothing about that spec.
    if (ctx.superseded.aborted) {
      result = { ...result, skipped: "superseded" };
      return result;
    }
    const classified = toDriftlessError(error);
    const isSource = classified.code === KnvCode.SourceFetch || classified.code === KnvCode.InvalidSync;
    result = isSource
      ? { ...result, sourceErrors: [...result.sourceErrors, classified] }
      : { ...result, syncErrors: [...result.syncErrors, classified] };
    return result;
  } finally {
    await progress?.stop();
    // Whatever happened: status, events on transitions, metrics and one log line. A pass cut short by
    // the reconciler's stop writes no status: what it would say (aborted) is not the sync's state.
    if (result.skipped === undefined && !ctx.signal.aborted) {
      const reported = await reportStatus(ctx, sync, raw, result).then(
        () => true,
        (error: unknown) => void ctx.log.error("status write failed", { error: String(error) }),
      );
      lap("status");
      // After the status: whoever waits on the request then reads this pass's outcome.
      if (request !== undefined && reported === true)
        await recordSyncRequestHandled(ctx.client, ctx.identity, request, ctx.log);
      status.unwritten = reported !== true;
    }
    result = { ...result, phases };
    const report = result;
    ctx.observePass(trigger, report, (performance.now() - started) / 1000);
  }
}

/** Writes the pass's status; an Event follows only when status changed (a new failure or a newly synced commit). */
async function reportStatus(
  ctx: PassContext,
  sync: RSync | undefined,
  raw: KubeObject | undefined,
  report: PassReport,
): Promise<void> {
  let previousCommit: unknown;
  const changed = await writeStatus(
    ctx.client,
    ctx.identity,
    (_raw, current) => {
      previousCommit = current["lastSyncedCommit"];
      return nextStatus(ctx.identity, sync, current, report, new Date());
    },
    raw === undefined ? undefined : { raw, known: ctx.knownStatus },
  );
  if (!changed) return;
  const errors = [...(report.rendering?.errors ?? []), ...report.sourceErrors, ...report.syncErrors];
  const first = errors[0];
  if (first !== undefined) {
    await recordEvent(
      ctx.client,
      ctx.identity,
      raw,
      SyncEventReason.Failed,
      `${errors.length} error(s); first: ${first.code}: ${first.message}`,
      ctx.log,
    );
  } else if (report.synced && report.commit !== previousCommit) {
    await recordEvent(
      ctx.client,
      ctx.identity,
      raw,
      SyncEventReason.Synced,
      `Synced commit ${report.commit ?? ""}`,
      ctx.log,
    );
  }
}

async function fetchSource(ctx: PassContext, sync: RSync, trigger: PassTrigger): Promise<FetchResult> {
  // A new spec (a repository, image or revision fixed) ends a fetch or pull hanging on the old one, up to its
  // timeout (git's 2 minutes, a registry's 120 s).
  const signal = AbortSignal.any([ctx.signal, ctx.superseded]);
  if ((sync.spec.sourceType ?? SourceType.Git) !== SourceType.Git) return ctx.fetchArtifact(sync, trigger, signal);
  const git = sync.spec.git;
  if (git === undefined) {
    throw new DriftlessError({
      code: KnvCode.InvalidSync,
      errorClass: ErrorClass.Terminal,
      message: "spec.git is required for sourceType git",
    });
  }
  const source = { ...git, depth: sync.spec.override?.gitSyncDepth }; // override.gitSyncDepth: history fetched
  // The last checkout serves again while spec.git is unchanged: a drift pass re-applies it without
  // asking the remote, and any other pass when the remote still points at its commit.
  const spec = JSON.stringify([source, ctx.secretReads.changes]);
  const last = ctx.lastFetchSpec === spec ? ctx.lastFetch : undefined;
  if (trigger === "drift" && last !== undefined) return last;
  const credentials = await readGitCredentials(ctx.client, sync, ctx.secretReads);
  const remote = await ctx.git.resolveRemote({ spec: source, credentials, signal });
  if (last !== undefined && last.commit === remote.commit) return last;
  const fetched = await ctx.git.fetch({ syncKey: ctx.syncKey, spec: source, credentials, signal });
  ctx.rememberFetch(fetched, spec);
  return fetched;
}

/** The log line for a wait that timed out; the KNV2009 errors on status.sync come from ctx.reconcileTimeouts. */
function logReconcileTimeout(ctx: PassContext, timedOut: readonly ApplyOutcome[], timeoutMs: number): void {
  ctx.log.warn("reconcile timeout: applied objects not Current within override.reconcileTimeout", {
    timeoutMs,
    objects: timedOut.slice(0, 10).map((o) => `${idKey(o.desired.id)} (${o.health ?? "Unknown"})`),
    count: timedOut.length,
  });
}

/** The log line for pruned objects still being deleted: before waiting for them, and at the timeout (not an error, as in Config Sync). */
function logPruneWait(ctx: PassContext, message: string, ids: readonly ObjectId[]): void {
  ctx.log.info(message, { objects: ids.slice(0, 10).map(idKey), count: ids.length });
}
