import {
  Defaults,
  DriftlessError,
  ErrorClass,
  isSuspended,
  pollPeriodMs,
  sourcePeriodOf,
  toDriftlessError,
  type RSync,
} from "@driftless/api";
import {
  alignApplySetParent,
  applyObject,
  type ApplyOptions,
  type ApplyOutcome,
  type DesiredObject,
  type Inventory,
  type ObjectId,
  type PruneOptions,
  type SyncIdentity,
} from "@driftless/applier";
import type { FetchResult, GitFetcher } from "@driftless/git";
import { KubeClient } from "@driftless/kube";
import { serveMetrics, type Metrics } from "@driftless/metrics";
import { startPoller, type Poller } from "@driftless/queue";
import type { SourceResult } from "@driftless/source";
import type { PassContext } from "./context.ts";
import { ensureFinalizer, finalize } from "./finalizer.ts";
import { InformerLiveState } from "./live-cache.ts";
import type { Logger } from "./log.ts";
import { PassLane } from "./pass-lane.ts";
import { runPass, type PassResult, type PassTrigger } from "./pass.ts";
import { Correction } from "./remediator.ts";
import { applyOptionsFor, pruneOptionsFor } from "./pass-options.ts";
import { recordCorrection, recordCorrectionInternalError, recordPass, recordUndeclared } from "./pass-metrics.ts";
import { shutdown } from "./shutdown.ts";
import { collectAfterPass, memoryMiB } from "./memory.ts";
import { loadSync, rsyncMapping } from "./rsync.ts";
import type { NamedReads } from "./named-watch.ts";
import { secretNamesReadBy } from "./secret-watch.ts";
import { valuesFileNamesOf } from "./values-file-watch.ts";
import type { Rendered } from "./rendering.ts";
import { ReconcileTimeouts } from "./reconcile-timeouts.ts";
import { UndeclaredReport } from "./undeclared-report.ts";
import { wireReconciler, type ReconcilerParts } from "./wiring.ts";
import type { ResourceGroupStatus } from "./resource-group-status.ts";
import { KnownStatus, type PassReport } from "./status.ts";
import type { ReconcilerOptions } from "./reconciler-options.ts";

/**
 * Triggers that only say the source may have moved. When it has not (revision and generation those of the
 * last complete pass, within the resync period), such a pass ends after its ls-remote: a replayed or repeated
 * push must not buy a full pass each time. Every other trigger (drift, a manager request) runs in full.
 */
const sourceMayHaveMoved: ReadonlySet<string> = new Set<PassTrigger>(["poll", "webhook"]);

/**
 * One sync's reconciler: a queue worker that runs one pass at a time, a poll timer, the remediator,
 * the deletion finalizer and the metrics endpoint. `apps/reconciler` is the process around it. While
 * Redis is unavailable it runs the passes the queue cannot take itself, in the same lane as the jobs.
 */
export class Reconciler implements PassContext {
  readonly client: KubeClient;
  readonly identity: SyncIdentity;
  readonly inventory: Inventory;
  readonly resourceGroupStatus: ResourceGroupStatus;
  readonly reconcileTimeouts = new ReconcileTimeouts();
  readonly unrecordedCreates = new Set<string>();
  readonly knownStatus = new KnownStatus();
  readonly git: GitFetcher;
  readonly syncKey: string;
  readonly log: Logger;
  readonly metrics: Metrics;
  lastFetch: FetchResult | undefined;
  lastFetchSpec: string | undefined;
  lastPass: PassReport | undefined;
  /** What the remediator guards, the last synced pass's: its commit, revision (revisionOf) and RSync generation. */
  private guarded:
    { readonly commit: string; readonly revision: string; readonly generation: number | undefined } | undefined;
  /**
   * The commit of the last pass that declared, synced or not: the watches follow its declarations, so a
   * conflict they see counts on it, as Config Sync's watchers carry the commit of the last declaration.
   */
  private declaredCommit: string | undefined;
  /** Passes finished since start (tests and /readyz use it). */
  passCount = 0;
  /** Set once the RSync is being deleted: drift is no longer corrected. */
  private deleting = false;
  /** The RSync carries `driftless.dev/suspend: "true"` (as of the last pass): nothing is applied or corrected. */
  private suspended = false;
  /**
   * True while a pass runs: unless its commit is the synced one, the remediator then notes changes
   * and checks them when the pass ends (ReconcilerParts.afterPass) instead of correcting.
   */
  private passing = false;
  /** The revision (revisionOf) the running pass works on, once known. */
  private passRevision: string | undefined;
  /** The last pass that applied everything: its revision (revisionOf), the RSync generation, and when. */
  private lastComplete:
    { readonly revision: string; readonly generation: number | undefined; readonly at: number } | undefined;
  private passGeneration: number | undefined;
  /**
   * A pass other than a poll was asked for and none has begun since. The queue keeps one waiting job
   * per sync: a trigger while a poll waits is dropped, and a poll enqueued behind a running pass
   * replaces a stored request. So the request lives here too, and the poll that carries it runs in full.
   */
  private passAsked = false;
  metricsUrl: string | undefined;
  private readonly undeclaredReport = new UndeclaredReport();

  private readonly options: ReconcilerOptions;
  /** Its collaborators, built from the options (wiring.ts). */
  private readonly parts: ReconcilerParts;
  private poller: Poller | undefined;
  /** Jobs and the passes run here while the queue cannot take them, one at a time. */
  private readonly lane: PassLane;
  private server: { close(): Promise<void> } | undefined;

  private constructor(options: ReconcilerOptions, client: KubeClient) {
    this.options = options;
    this.client = client;
    this.identity = options.identity;
    this.parts = wireReconciler(options, client, {
      requestPass: (reason) => void this.trigger("drift", reason),
      // What Config Sync's manager does on a Secret event: the sync is set up again and its source read afresh.
      requestFetch: (reason) => void this.trigger("manager", reason),
      correct: (desired) => this.correct(desired),
      declarationsChanging: () => this.declarationsChanging(),
      passing: () => this.passing,
      resourceConflict: () => this.recordResourceConflict(),
    });
    this.syncKey = this.parts.syncKey;
    this.log = this.parts.log;
    this.inventory = this.parts.inventory;
    this.git = this.parts.git;
    this.metrics = this.parts.metrics;
    this.resourceGroupStatus = this.parts.resourceGroupStatus;
    this.lane = new PassLane((trigger) => this.process(trigger), this.log);
  }

  /** True while passes run in this process because the queue cannot take them (Redis unavailable). */
  get bypassingQueue(): boolean {
    return this.lane.bypassingQueue;
  }

  get clusterName(): string | undefined {
    return this.options.clusterName;
  }

  get signal(): AbortSignal {
    return this.parts.abort.signal;
  }

  readonly #deletionSeen = new AbortController();
  /** The running pass's: aborted when the watch sees a generation other than the one the pass loaded. */
  #passSuperseded = new AbortController();
  /** The generation the running pass loaded (undefined between passes). */
  #passLoadedGeneration: number | undefined;
  #waitSignal: AbortSignal | undefined;

  get waitSignal(): AbortSignal {
    this.#waitSignal ??= AbortSignal.any([
      this.parts.abort.signal,
      this.#deletionSeen.signal,
      this.#passSuperseded.signal,
    ]);
    return this.#waitSignal;
  }

  get superseded(): AbortSignal {
    return this.#passSuperseded.signal;
  }

  /** A new spec while a pass waits up to a reconcileTimeout on the old one: it ends, and a pass on the new one follows. */
  private supersedePass(generation: number): void {
    const loaded = this.#passLoadedGeneration;
    if (!this.passing || loaded === undefined || generation <= loaded || this.#passSuperseded.signal.aborted) return;
    this.log.info("the sync's spec changed during the pass: ending it for a pass on the new spec", {
      generation: loaded,
      newGeneration: generation,
    });
    this.#passSuperseded.abort();
    void this.trigger("manager", "spec changed during a pass");
  }

  /** A fresh superseded signal (and wait signal) for the pass about to run on `generation`. */
  private beginPassSignals(generation: number | undefined): void {
    this.#passLoadedGeneration = generation;
    if (this.#passSuperseded.signal.aborted) {
      this.#passSuperseded = new AbortController();
      this.#waitSignal = undefined;
    }
  }

  /** Connects, adds the finalizer, starts the worker, the poll timer and (optionally) /metrics. */
  static async start(options: ReconcilerOptions): Promise<Reconciler> {
    // Config Sync's default (15 s, the CRD says so), not the client's own.
    const client = await KubeClient.fromKubeconfig(options.kubeconfig, {
      timeoutMs: options.apiServerTimeoutMs ?? Defaults.apiServerTimeoutMs,
    });
    const reconciler = new Reconciler(options, client);
    await reconciler.startServing();
    return reconciler;
  }

  private async startServing(): Promise<void> {
    if (this.options.metricsPort !== undefined) {
      const server = await serveMetrics({
        port: this.options.metricsPort,
        registry: this.metrics.registry,
        health: () =>
          Promise.resolve({ healthy: !this.parts.abort.signal.aborted, ready: this.lastPass !== undefined }),
      });
      this.server = server;
      this.metricsUrl = `http://127.0.0.1:${server.port}`;
    }
    await ensureFinalizer(this.client, this.identity);
    // Seen by the watch, not only by the deletion's job: another reconciler of this sync (a frozen manager's,
    // beside its successor's) may run that job, and a correction here would undo what its finalizer releases.
    this.parts.ownSync.onDeletion(() => this.stopCorrecting());
    this.parts.ownSync.onNewGeneration((generation) => this.supersedePass(generation));
    this.parts.ownSync.start();
    // A job whose turn comes once the reconciler is stopping is left to the next start's first poll.
    this.parts.queue.worker((job) =>
      this.lane.serial(() => (this.lane.closed ? Promise.resolve() : this.process(job.data.trigger as PassTrigger))),
    );
    const loaded = await loadSync(this.client, this.identity);
    this.labelGeneration(loaded?.raw.metadata.generation);
    const specPeriod = loaded?.sync === undefined ? undefined : sourcePeriodOf(loaded.sync.spec);
    const period = this.options.pollPeriodMs ?? pollPeriodMs(specPeriod);
    // trigger() never rejects: a poll the queue cannot take runs here.
    this.poller = startPoller({
      periodMs: period,
      immediate: true,
      tick: () => this.trigger("poll"),
      onError: (error) => this.log.warn("poll failed", { error: String(error) }),
    });
    this.log.info("reconciler started", {
      pollPeriodMs: period,
      specPeriod,
      ...(this.options.apiServerTimeoutMs === undefined ? {} : { apiServerTimeoutMs: this.options.apiServerTimeoutMs }),
    });
  }

  /**
   * The commit whose declaration the remediator guards: the last pass that declared one, if it synced. A
   * pass that stopped before declaring (a source it could not fetch or read, a failsafe refusing the commit)
   * leaves it as it was, so drift is still corrected, as Config Sync's remediator keeps its last declared set.
   */
  private syncedCommit(): string | undefined {
    return this.guarded?.commit;
  }

  /** One resource conflict, counted against the commit last declared (none before a pass declared). */
  private recordResourceConflict(): void {
    const commit = this.declaredCommit;
    if (commit !== undefined) this.metrics.resourceConflicts.inc({ commit }, 1);
  }

  /** A pass is running and not (known to be) on the revision and spec the remediator guards. */
  private declarationsChanging(): boolean {
    const guarded = this.guarded;
    // A new spec may render the same revision differently (spec.override.enableShellInRendering); a dynamic
    // NamespaceSelector changes what is declared without either.
    return (
      this.passing &&
      (this.passRevision !== guarded?.revision ||
        this.passGeneration !== guarded?.generation ||
        this.parts.sources.dynamicNamespaces)
    );
  }

  /**
   * Asks for a pass; de-duplicated by the queue (one waiting, one running). When the queue cannot take
   * it (Redis unavailable), the pass runs here: a sync must not stop while Redis is away.
   */
  async trigger(trigger: PassTrigger, reason?: string): Promise<void> {
    if (trigger !== "poll") this.passAsked = true;
    try {
      await this.parts.queue.enqueue(trigger, reason === undefined ? {} : { reason });
    } catch (error) {
      this.lane.runHere(trigger, error);
      return;
    }
    this.lane.queueTook();
  }

  /**
   * Re-applies one drifted object from the last synced commit, outside the pass queue: a single
   * write with optimistic concurrency is safe beside a running pass. Not while the sync is being
   * deleted, when re-creating objects would fight the finalizer, nor once this reconciler is stopping:
   * its manager may be gone or frozen, and another reconciler of the sync guarding a newer commit.
   */
  private async correct(desired: DesiredObject): Promise<Correction> {
    const commit = this.syncedCommit();
    // A pass on another commit may be changing the declarations under us: leave it to the pass queued
    // behind it. A pass on the synced commit changes nothing we would re-apply.
    if (
      commit === undefined ||
      this.deleting ||
      this.stopping !== undefined ||
      this.suspended ||
      this.declarationsChanging()
    )
      return Correction.Deferred;
    const started = performance.now();
    let outcome: ApplyOutcome;
    try {
      outcome = await applyObject(desired, this.applyOptions(commit));
    } catch (error) {
      recordCorrectionInternalError(this.metrics, "threw");
      throw error;
    }
    recordCorrectionInternalError(this.metrics, outcome);
    this.resourceGroupStatus.observe(outcome); // its echo is silent: a re-created object is no longer NotFound
    recordCorrection(this.metrics, outcome, (performance.now() - started) / 1000);
    if (outcome.operation === "created" || outcome.operation === "updated") {
      this.log.info("drift corrected", {
        object: `${desired.id.kind}/${desired.id.namespace ?? ""}/${desired.id.name}`,
        operation: outcome.operation,
      });
    }
    if (outcome.error !== undefined)
      return outcome.error.errorClass === ErrorClass.Retry ? Correction.Deferred : Correction.Refused;
    return outcome.operation === "created" || outcome.operation === "updated"
      ? Correction.Written
      : Correction.Unchanged;
  }

  /**
   * The sync is being deleted (or is gone): its finalizer alone settles the objects, so nothing is corrected
   * from here on, and a pass waiting for objects to become Current stops waiting, for the deletion's job.
   */
  private stopCorrecting(): void {
    this.deleting = true;
    this.parts.remediator?.setDeclared([]);
    this.#deletionSeen.abort();
  }

  /** The job processor: deletion first, then a reconcile pass. Throws to let the queue retry. */
  private async process(trigger: PassTrigger): Promise<void> {
    let failure: DriftlessError | undefined;
    try {
      failure = await this.runJob(trigger);
    } catch (error) {
      // A pass logs and reports its own errors; what fails around it (reading the RSync, its finalizer,
      // a deletion) would otherwise reach only the queue's failure counter.
      const classified = toDriftlessError(error);
      this.log.warn("job failed outside a pass", {
        trigger,
        code: classified.code,
        errorClass: classified.errorClass,
        error: classified.message,
      });
      throw error;
    }
    if (failure !== undefined) throw failure;
  }

  /** One job's work; returns the pass's failure for the queue (retry or terminal), already reported. */
  private async runJob(trigger: PassTrigger): Promise<DriftlessError | undefined> {
    const loaded = await loadSync(this.client, this.identity, () => this.parts.ownSync.current());
    this.labelGeneration(loaded?.raw.metadata.generation);
    if (loaded?.raw.metadata.deletionTimestamp !== undefined) {
      this.stopCorrecting();
      await this.parts.valuesWatch.follow([]);
      await this.parts.secretWatch.follow([]);
      // The finalizer deletes or releases the group; once it is done the manager withdraws this
      // reconciler's rights, and a status write still scheduled would only meet a 403.
      this.resourceGroupStatus.stop();
      await this.resourceGroupStatus.settled();
      await finalize(
        {
          client: this.client,
          mapper: this.parts.mapper,
          identity: this.identity,
          pruneOptions: () => this.pruneOptions(),
          lastAppliedAnnotation: this.parts.annotator.annotationKey,
          log: this.log,
        },
        loaded.raw,
      );
      return undefined;
    }
    if (loaded !== undefined) await ensureFinalizer(this.client, this.identity, loaded.raw);
    await this.parts.valuesWatch.follow(valuesFileNamesOf(loaded?.sync));
    await this.parts.secretWatch.follow(secretNamesReadBy(loaded?.sync));
    // The RSync is its ApplySet's parent, as Config Sync labels it; another tool's set is left alone.
    if (loaded !== undefined)
      await alignApplySetParent(this.client, rsyncMapping(this.identity.kind), this.identity, loaded.raw).catch(
        (error: unknown) => this.log.warn("RSync not labelled as its ApplySet's parent", { error: String(error) }),
      );
    this.suspended = isSuspended(loaded?.raw.metadata.annotations);
    // Resuming must apply at once, not wait out the resync period behind the last complete pass.
    if (this.suspended) this.lastComplete = undefined;
    this.beginPassSignals(loaded?.raw.metadata.generation);
    this.passing = true;
    this.passRevision = undefined;
    let result: Awaited<ReturnType<typeof runPass>> | undefined;
    try {
      result = await runPass(this, trigger, loaded);
      this.passCount++;
      if (result.skipped === "unchanged") return undefined;
      collectAfterPass();
      this.lastPass = result;
      // A pass still reporting errors (a reconcile timeout), or whose status write failed, is not complete,
      // and neither is the commit it failed on any more: polls keep checking it in full.
      this.lastComplete =
        result.synced && result.syncErrors.length === 0 && result.revision !== undefined && !result.statusUnwritten
          ? { revision: result.revision, generation: this.passGeneration, at: Date.now() }
          : undefined;
      // Guard what Git declares now, before another correction can run: an object this pass pruned
      // must not be re-created from the previous commit's declaration. A pass that ends after the sync's
      // deletion was seen guards nothing.
      if (result.declared !== undefined && !this.deleting) {
        this.parts.remediator?.setDeclared(result.declared);
        this.parts.remediator?.passApplied(result.applied);
        this.parts.verified.retain(result.declared);
        this.declaredCommit = result.commit;
        this.guarded =
          result.synced && result.commit !== undefined && result.revision !== undefined
            ? { commit: result.commit, revision: result.revision, generation: this.passGeneration }
            : undefined;
      }
    } finally {
      this.passing = false;
      this.#passLoadedGeneration = undefined;
      this.passRevision = undefined;
      this.parts.afterPass();
    }
    const errors = [...(result.rendering?.errors ?? []), ...result.sourceErrors, ...result.syncErrors];
    // Transient failures retry with backoff; configuration errors wait for the next commit or poll.
    const transient = errors.find((e) => e.errorClass === ErrorClass.Retry);
    if (transient !== undefined) return transient;
    const terminal = errors[0];
    if (terminal === undefined) return undefined;
    return new DriftlessError({
      code: terminal.code,
      errorClass: ErrorClass.Terminal,
      message: terminal.message,
      cause: terminal,
    });
  }

  beginCommit(trigger: string, revision: string, generation: number | undefined): boolean {
    this.passRevision = revision;
    this.passGeneration = generation;
    const asked = this.passAsked;
    this.passAsked = false;
    const last = this.lastComplete;
    const resyncMs = this.options.resyncPeriodMs ?? 300_000;
    return (
      sourceMayHaveMoved.has(trigger) &&
      !asked &&
      last !== undefined &&
      last.revision === revision &&
      last.generation === generation &&
      Date.now() - last.at < resyncMs
    );
  }

  get secretReads(): NamedReads {
    return this.parts.secretWatch;
  }

  fetchArtifact(sync: RSync, trigger: PassTrigger, signal: AbortSignal): Promise<FetchResult> {
    return this.parts.sources.fetchArtifact(sync, trigger, signal);
  }

  rememberFetch(fetched: FetchResult, spec: string): void {
    this.lastFetch = fetched;
    this.lastFetchSpec = spec;
  }

  render(fetched: FetchResult, sync: RSync): Promise<Rendered> {
    return this.parts.sources.render(fetched, sync);
  }

  readSource(fetched: FetchResult, sync: RSync): Promise<SourceResult> {
    return this.parts.sources.readSource(fetched, sync);
  }

  get sourceSelectsDynamically(): boolean {
    return this.parts.sources.dynamicNamespaces;
  }

  /** What the watch caches hold, and how many labelled objects they leave out now (undefined without caches). */
  watchCache(): { readonly objects: number; readonly undeclared: number } | undefined {
    if (!(this.parts.live instanceof InformerLiveState)) return undefined;
    let undeclared = 0;
    for (const count of this.parts.live.undeclaredByType().values()) undeclared += count;
    return { objects: this.parts.live.size, undeclared };
  }

  declaring(desired: readonly DesiredObject[], setAside: readonly ObjectId[]): void {
    if (this.parts.live instanceof InformerLiveState) this.parts.live.declare(desired, setAside);
  }

  applyOptions(commit: string): ApplyOptions {
    return applyOptionsFor(this.parts, this.options, commit);
  }

  pruneOptions(): PruneOptions {
    return pruneOptionsFor(this.parts, this.options);
  }

  activeFights(): ReadonlyMap<string, DriftlessError> {
    return this.parts.remediator?.activeFights() ?? new Map<string, DriftlessError>();
  }

  /** Every series carries the spec's generation, as Config Sync's reconciler does (from its pod's labels). */
  private labelGeneration(generation: number | undefined): void {
    if (generation !== undefined) this.metrics.setSyncGeneration(generation);
  }

  /** Metrics with Config Sync's names, and the one log line of the pass. */
  observePass(trigger: PassTrigger, result: PassResult, seconds: number): void {
    this.reportUndeclared();
    if (result.skipped === "unchanged") {
      this.log.debug(`${trigger}: commit and spec unchanged, nothing to apply`, {
        commit: result.commit,
        seconds: Math.round(seconds * 1000) / 1000,
      });
      return;
    }
    recordPass(this.metrics, this.identity, trigger, result, seconds);
    if (result.skipped === "superseded") {
      this.log.info(`${trigger}: pass ended for a pass on the sync's new spec`, {
        commit: result.commit,
        seconds: Math.round(seconds * 1000) / 1000,
      });
      return;
    }
    const errors = [...(result.rendering?.errors ?? []), ...result.sourceErrors, ...result.syncErrors];
    // A failed attempt at error, as Config Sync logs "Reconcile attempt failed"; one whose errors will all pass
    // by themselves (retried: a render container on its way, an API server hiccup) at warn.
    this.log[passLogLevel(errors)]("pass finished", {
      trigger,
      commit: result.commit,
      synced: result.synced,
      seconds: Math.round(seconds * 1000) / 1000,
      phases: result.phases,
      memoryMiB: memoryMiB(),
      errors: errors.slice(0, 5).map((e) => ({ code: e.code, message: e.message })),
    });
  }

  /** The labelled objects the watch caches leave out, as a gauge every pass and a log line when their count changes. */
  private reportUndeclared(): void {
    if (!(this.parts.live instanceof InformerLiveState)) return;
    const counts = this.parts.live.undeclaredByType();
    recordUndeclared(this.metrics, counts);
    const line = this.undeclaredReport.next(counts);
    if (line !== undefined) this.log[line.level](line.message, line.fields);
  }

  /**
   * Graceful stop: lets the running pass finish (bounded), then closes watches, queue, Redis and
   * /metrics. Idempotent: a second call (a signal during shutdown) waits for the first.
   */
  stop(timeoutMs = 30_000): Promise<void> {
    this.stopping ??= shutdown(this.parts, { poller: this.poller, lane: this.lane, server: this.server }, timeoutMs);
    return this.stopping;
  }

  private stopping: Promise<void> | undefined;
}

function passLogLevel(errors: readonly DriftlessError[]): "info" | "warn" | "error" {
  if (errors.length === 0) return "info";
  return errors.every((e) => e.errorClass === ErrorClass.Retry) ? "warn" : "error";
}
