import { join } from "node:path";
import {
  crdNameOf,
  CustomResourceSchemaLoader,
  DirectLiveState,
  Inventory,
  VerifiedMatches,
  type DesiredObject,
} from "@driftless/applier";
import { GitFetcher } from "@driftless/git";
import { apiVersionOf, RestMapper, type KubeClient, type ResourceMapping } from "@driftless/kube";
import { createMetrics, syncLabels, type Metrics } from "@driftless/metrics";
import { Annotator, CustomResourceSchemaRegistry, PatchMaker, resolveKind } from "@driftless/objectmatcher";
import {
  createRedisConnection,
  DEFAULT_PREFIX,
  RedisRole,
  SyncQueue,
  syncQueueName,
  type RedisConnection,
} from "@driftless/queue";
import { CrdWatch, crdServes } from "./crd-watch.ts";
import { DeclaredTypeGone } from "./declared-type-gone.ts";
import { InformerLiveState } from "./live-cache.ts";
import { createLogger, type Logger } from "./log.ts";
import { NamespaceWatch } from "./namespace-watch.ts";
import { OwnSyncWatch } from "./own-sync-watch.ts";
import { initPassMetrics, observeApiCalls } from "./pass-metrics.ts";
import type { ReconcilerOptions } from "./reconciler-options.ts";
import { Remediator, type Correction } from "./remediator.ts";
import { ResourceGroupStatus } from "./resource-group-status.ts";
import { SecretWatch } from "./secret-watch.ts";
import { SourceSteps } from "./source-steps.ts";
import { ValuesFileWatch } from "./values-file-watch.ts";

/** What a reconciler is made of: built once from its options, held by the Reconciler for its life. */
export interface ReconcilerParts {
  readonly client: KubeClient;
  readonly syncKey: string;
  readonly log: Logger;
  readonly mapper: RestMapper;
  readonly inventory: Inventory;
  readonly annotator: Annotator;
  readonly matcher: PatchMaker;
  /** Custom resources' schemas, read from their CRDs into the matcher's registry before they are matched. */
  readonly schemas: CustomResourceSchemaLoader;
  readonly git: GitFetcher;
  readonly metrics: Metrics;
  readonly live: InformerLiveState | DirectLiveState;
  /** CRDs' metadata: a changed one makes its schema stale, a deleted one ends the watch of its kinds. */
  readonly crdWatch: CrdWatch | undefined;
  readonly remediator: Remediator | undefined;
  readonly resourceGroupStatus: ResourceGroupStatus;
  /** The cluster's Namespaces, watched once a source has a dynamic NamespaceSelector: a change asks for a pass. */
  readonly namespaceWatch: NamespaceWatch;
  /** The ConfigMaps of spec.helm.valuesFileRefs: a change asks for a pass that renders their values again. */
  readonly valuesWatch: ValuesFileWatch;
  /** The Secrets its source reads: a change asks for a pass that reads them again (Config Sync's manager watches them). */
  readonly secretWatch: SecretWatch;
  /** Its own RSync: each pass reads it from here, not with a GET per poll. */
  readonly ownSync: OwnSyncWatch;
  readonly redis: RedisConnection;
  readonly queue: SyncQueue;
  /** Objects found equal to their declaration, so a resync skips matching them again (applier). */
  readonly verified: VerifiedMatches;
  /** Judges what the watches told during a pass against the declarations it left: called as each pass ends. */
  readonly afterPass: () => void;
  /** Aborted by a stop: cuts the running pass's waits short. */
  readonly abort: AbortController;
  readonly sources: SourceSteps;
}

/** What the parts call back into the reconciler that owns them. */
export interface ReconcilerHooks {
  /** Asks for a drift pass. */
  requestPass(reason: string): void;
  /** Asks for a pass that reads the source and its Secrets again (not the last checkout, as a drift pass may). */
  requestFetch(reason: string): void;
  correct(desired: DesiredObject): Promise<Correction>;
  declarationsChanging(): boolean;
  passing(): boolean;
  /** The live objects of a declared type disagreed with the declaration under us (resource_conflicts_total). */
  resourceConflict(): void;
}

/** The composition root: a reconciler's clients, caches, watches, remediator and queue, wired from its options. */
export function wireReconciler(
  options: ReconcilerOptions,
  client: KubeClient,
  hooks: ReconcilerHooks,
): ReconcilerParts {
  const annotator = new Annotator();
  const verified = new VerifiedMatches();
  const abort = new AbortController();
  // The queue's name doubles as the git cache key: one naming of a sync, no `:` or `/`.
  const syncKey = syncQueueName(options.identity);
  const log =
    options.log ??
    createLogger({
      component: "reconciler",
      sync: `${options.identity.kind}/${options.identity.namespace}/${options.identity.name}`,
    });
  const mapper = new RestMapper(client);
  const inventory = new Inventory(client, options.identity);
  const registry = new CustomResourceSchemaRegistry();
  const matcher = new PatchMaker(annotator, { schemas: registry });
  const schemas = new CustomResourceSchemaLoader({ client, registry, mapper, log });
  const git = new GitFetcher({
    cacheDir: join(options.cacheDir, "git"),
    logger: log,
    allowFileTransport: options.allowFileTransport ?? false,
  });
  const metrics = createMetrics({ defaultLabels: syncLabels(options.identity) });
  initPassMetrics(metrics);
  observeApiCalls(client, metrics);
  const namespace = options.identity.kind === "RepoSync" ? options.identity.namespace : undefined;
  let live: InformerLiveState | DirectLiveState;
  let crdWatch: CrdWatch | undefined;
  let remediator: Remediator | undefined;
  let declaredTypeGone: DeclaredTypeGone | undefined;
  if (options.useWatchCache === false) {
    live = new DirectLiveState(client);
  } else {
    const typeGone = new DeclaredTypeGone({
      declares: (mapping) => informers.declares(mapping),
      watchedTypes: () => informers.watchedTypes(),
      declarationsChanging: () => hooks.declarationsChanging(),
      resourceConflict: () => hooks.resourceConflict(),
      requestPass: (reason) => hooks.requestPass(reason),
    });
    declaredTypeGone = typeGone;
    const informers = new InformerLiveState(client, {
      sync: options.identity,
      stopping: abort.signal,
      ...(namespace === undefined ? {} : { namespace }),
      recordAnnotation: annotator.annotationKey,
      onInformerError: (mapping, error) =>
        log.warn("watch cache: list or watch failed; retrying", {
          resource: resourceName(mapping),
          error: error.message,
        }),
      // The pass that started the watch may have ended before the refusal came: the next one reports it.
      onWatchRefused: (mapping) => hooks.requestPass(`the API server refuses to watch ${resourceName(mapping)}`),
      onTypeGone: (mapping) => {
        log.debug("watch cache: type no longer served; its watch ended", {
          resource: resourceName(mapping),
        });
        mapper.invalidate();
        typeGone.told(mapping);
      },
      // CRDs matter to a sync only through the custom resources it manages: one that manages none
      // (most tenants' RepoSyncs) opens no CRD watch.
      onTypeWatched: (mapping) => {
        if (isCustomResource(mapping)) crdWatch?.start();
      },
      // Nothing tells an unwatched kind's schema is stale: read again if declared again. The CRD watch ends
      // with the last custom resource type watched.
      onTypesUnwatched: (stopped) => {
        for (const mapping of stopped.filter(isCustomResource)) schemas.changed(crdNameOf(mapping), undefined);
        if (crdWatch?.watching !== true || informers.watchedTypes().some(isCustomResource)) return;
        log.debug("CRD watch stopped: the sync manages no custom resources any more", {});
        void crdWatch.stop();
      },
    });
    live = informers;
    crdWatch = new CrdWatch(
      client,
      {
        changed: (name, meta) => {
          // Objects found equal under the old schema are matched again by the next pass, though they did not change.
          const served = crdServes(name);
          if (schemas.changed(name, meta) && served !== undefined) verified.forgetGroup(served.group);
        },
        deleted: (group, resource) => {
          mapper.invalidate();
          const gone = informers.watchedTypes().find((m) => m.group === group && m.resource === resource);
          void informers.stopWatching(group, resource);
          if (gone !== undefined) typeGone.told(gone);
        },
        refused: () => schemas.unwatched(),
      },
      log,
    );
    remediator = new Remediator({
      live: informers,
      sync: options.identity,
      matcher,
      schemas,
      annotator,
      log,
      requestPass: (reason) => hooks.requestPass(reason),
      correct: (desired) => hooks.correct(desired),
      onFight: () => metrics.resourceFights.inc(),
      declarationsChanging: () => hooks.declarationsChanging(),
    });
  }
  const resourceGroupStatus = new ResourceGroupStatus({
    inventory,
    identity: options.identity,
    ...(live instanceof InformerLiveState ? { live } : {}),
    mapper,
    metrics,
    log,
    passing: () => hooks.passing(),
  });
  const namespaceWatch = new NamespaceWatch(client, (reason) => hooks.requestPass(reason), abort.signal);
  const valuesWatch = new ValuesFileWatch(
    client,
    options.identity.namespace,
    (reason) => hooks.requestPass(reason),
    log,
  );
  const secretWatch = new SecretWatch(client, options.identity.namespace, (reason) => hooks.requestFetch(reason), log);
  const ownSync = new OwnSyncWatch(client, options.identity, log);
  // Worker role: the queue runs its worker on this connection too (one connection and BullMQ's
  // blocking one per reconciler); enqueue still fails fast during an outage (packages/queue).
  // Outages (one line as each begins and ends, the URL masked) and the queue's own errors go to the
  // sync's JSON log at warn, as the manager's do, not as bare lines on stderr.
  const redis = createRedisConnection(options.redisUrl, {
    role: RedisRole.Worker,
    connectionName: `${options.queuePrefix ?? DEFAULT_PREFIX}:${syncKey}:reconciler`,
    log: (message) => log.warn(message),
  });
  const queue = new SyncQueue({
    sync: options.identity,
    connection: redis,
    ...(options.queuePrefix === undefined ? {} : { prefix: options.queuePrefix }),
    hooks: {
      onJobDone: metrics.recordJob,
      onError: (error) => log.warn("queue error", { error: error.message }),
    },
  });
  metrics.watchQueueDepth("sync", queue);
  const sources = new SourceSteps(options, {
    client,
    mapper,
    namespaceWatch,
    valuesWatch,
    secretWatch,
    metrics,
    log,
    signal: abort.signal,
  });
  return {
    client,
    syncKey,
    log,
    mapper,
    inventory,
    annotator,
    matcher,
    schemas,
    git,
    metrics,
    live,
    crdWatch,
    remediator,
    resourceGroupStatus,
    namespaceWatch,
    valuesWatch,
    secretWatch,
    ownSync,
    redis,
    queue,
    verified,
    abort,
    sources,
    afterPass: () => {
      remediator?.recheckChangesDuringPass();
      declaredTypeGone?.recheck();
    },
  };
}

function isCustomResource(mapping: ResourceMapping): boolean {
  return !resolveKind(apiVersionOf(mapping.group, mapping.version), mapping.kind).builtIn;
}

/** `apps/v1/deployments`, `v1/configmaps`: a type as the log names it. */
function resourceName(mapping: ResourceMapping): string {
  return `${apiVersionOf(mapping.group, mapping.version)}/${mapping.resource}`;
}
