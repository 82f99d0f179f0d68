import type { DriftlessError, RSync } from "@driftless/api";
import type { ApplyOptions, DesiredObject, Inventory, ObjectId, PruneOptions, SyncIdentity } from "@driftless/applier";
import type { FetchResult, GitFetcher } from "@driftless/git";
import type { KubeClient } from "@driftless/kube";
import type { SourceResult } from "@driftless/source";
import type { Logger } from "./log.ts";
import type { NamedReads } from "./named-watch.ts";
import type { ReconcileTimeouts } from "./reconcile-timeouts.ts";
import type { Rendered } from "./rendering.ts";
import type { ResourceGroupStatus } from "./resource-group-status.ts";
import type { KnownStatus } from "./status.ts";
import type { PassResult, PassTrigger } from "./pass.ts";

/** What a pass needs from the reconciler that runs it; the Reconciler implements it. */
export interface PassContext {
  readonly client: KubeClient;
  readonly identity: SyncIdentity;
  /** The sync's ResourceGroup, kept across passes (an unchanged one is not read again). */
  readonly inventory: Inventory;
  /** The ResourceGroup's status, kept live between passes from the watch caches. */
  readonly resourceGroupStatus: Pick<ResourceGroupStatus, "afterPass">;
  /** Objects whose wait after apply timed out, reported (KNV2009) until they are Current or Failed. */
  readonly reconcileTimeouts: ReconcileTimeouts;
  /**
   * idKeys of the new objects the last pass left out of the inventory (a refused create, a write never
   * sent): the next pass's first inventory write leaves them out too, so a retry refused again writes no
   * ResourceGroup. Undefined: every new object is recorded before it is applied.
   */
  readonly unrecordedCreates?: Set<string>;
  /** The RSync status last read or written, so a pass holding a current copy skips the read. */
  readonly knownStatus: KnownStatus;
  readonly git: GitFetcher;
  /** Key of this sync's git cache folder. */
  readonly syncKey: string;
  readonly signal: AbortSignal;
  /**
   * Ends the pass's waits (for what it applied to become Current, for what it deleted to go) early: the
   * reconciler stopping, or its sync being deleted, whose finalizer should not wait up to a
   * reconcileTimeout behind a pass over a source that no longer matters (Config Sync stops its
   * controllers first), or the sync's spec changing (superseded).
   */
  readonly waitSignal: AbortSignal;
  /**
   * The sync's spec changed (a new generation) while the pass ran: its waits end (waitSignal) and it stops
   * before the prune, with no status, for a pass on the new spec; Config Sync replaces the reconciler pod.
   */
  readonly superseded: AbortSignal;
  readonly log: Logger;
  /** This cluster's name (the manager's `--cluster-name`), written on managed objects; undefined: none. */
  readonly clusterName: string | undefined;
  /**
   * The Secrets' watch (secret-watch.ts), told what a Git fetch read: a change it saw since the last checkout
   * makes even a drift pass fetch again with them.
   */
  readonly secretReads: NamedReads;
  /** The last checkout and the spec.git it came from: a drift pass or an unchanged remote reuses it. */
  readonly lastFetch: FetchResult | undefined;
  readonly lastFetchSpec: string | undefined;
  rememberFetch(fetched: FetchResult, spec: string): void;
  /** An OCI image or Helm chart fetched like a Git commit (the digest or chart version is the commit). */
  /** An OCI or Helm source's artifact; `signal` ends a pull still running (a stop, or a new spec). */
  fetchArtifact(sync: RSync, trigger: PassTrigger, signal: AbortSignal): Promise<FetchResult>;
  /**
   * Called once the pass knows its revision (see revisionOf). Returns true when the pass may stop here:
   * a poll found the revision and the RSync's generation unchanged since the last complete pass, within
   * the resync period, and no pass was asked for since the last began (the remediator handles drift in
   * between, as Config Sync's does).
   */
  beginCommit(trigger: string, revision: string, generation: number | undefined): boolean;
  /**
   * The checkout as the source reads it: rendered by kustomize when its directory holds a
   * kustomization (`source` undefined when that failed), the checkout itself otherwise.
   */
  render(fetched: FetchResult, sync: RSync): Promise<Rendered>;
  /** The checkout read in the sync's spec.sourceFormat. */
  readSource(fetched: FetchResult, sync: RSync): Promise<SourceResult>;
  /** Whether the source last read holds a NamespaceSelector in `mode: dynamic`. */
  readonly sourceSelectsDynamically?: boolean;
  applyOptions(commit: string): ApplyOptions;
  /** The objects this pass declares, before it applies them (the watch caches keep only these), and those set aside. */
  declaring?(desired: readonly DesiredObject[], setAside: readonly ObjectId[]): void;
  pruneOptions(): PruneOptions;
  /** Objects another writer keeps changing: skipped by the pass and reported (KNV2005). */
  activeFights(): ReadonlyMap<string, DriftlessError>;
  observePass(trigger: PassTrigger, result: PassResult, seconds: number): void;
}
