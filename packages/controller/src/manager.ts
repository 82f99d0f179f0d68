/**
 * The reconciler-manager: watches syncs, and for each one keeps a reconciler running (or tears
 * it down), holds its finalizer, and unblocks RepoSyncs in terminating namespaces. Every replica
 * watches and receives webhooks; only the leader (a Lease) processes the manager queue and runs
 * reconcilers. `apps/manager` is the process around it.
 */
import { reconcilerName, RootSyncNamespace } from "@driftless/api";
import { type KubeClient, requestResource } from "@driftless/kube";
import {
  createManagerMetrics,
  createResourceGroupControllerMetrics,
  ReconcilerState,
  serveMetrics,
  type ManagerMetrics,
  type MetricsServer,
  type ResourceGroupControllerMetrics,
} from "@driftless/metrics";
import {
  closeRedisConnection,
  createRedisConnection,
  DEFAULT_PREFIX,
  ManagerQueue,
  redisPasswordOf,
  type ManagerTrigger,
  type RedisConnection,
  type SyncRef,
} from "@driftless/queue";
import type { Logger } from "@driftless/sync";
import { readClusterAccess, type ClusterAccess } from "./credentials.ts";
import { createWorkload } from "./create-workload.ts";
import { parseLabelSelector, type LabelSelector } from "./label-selector.ts";
import { fencedClients, type LeaderElector } from "./leader-election.ts";
import type { ManagerEnd, ManagerOptions } from "./manager-options.ts";
import { missingReconcilerWritePolicy } from "./reconciler-write-policy.ts";
import { PushRouter } from "./push-router.ts";
import { reconcileSync, type SyncContext } from "./reconcile-sync.ts";
import { ReconcilerRedisUsers } from "./redis-users.ts";
import { ResourceGroupStatusController } from "./resource-group-status/controller.ts";
import { SyncQueues } from "./sync-queues.ts";
import { SyncWatcher } from "./sync-watcher.ts";
import { sweepOrphans } from "./sweep.ts";
import { webhookRequestResult } from "./webhook-metrics.ts";
import { serveWebhooks, type WebhookServer } from "./webhook-server.ts";
import { ReconcilerMode, type ReconcilerWorkload } from "./workload.ts";

/** Lock of a manager job (renewed at half this while it runs); a dead leader's job is free after it. */
const managerJobLockMs = 10_000;
/** How often locks that expired are looked for, and their jobs queued again. */
const managerStalledCheckMs = 5_000;

export class Manager {
  readonly client: KubeClient;
  readonly metrics: ManagerMetrics;
  readonly workload: ReconcilerWorkload;
  readonly #o: ManagerOptions;
  readonly #log: Logger;
  readonly #redis: RedisConnection;
  readonly #queue: ManagerQueue;
  readonly #syncQueues: SyncQueues;
  readonly #redisUsers: ReconcilerRedisUsers;
  readonly #watcher: SyncWatcher;
  readonly #elector: LeaderElector;
  readonly #leaseClient: KubeClient;
  readonly #inScope: LabelSelector;
  #metricsServer: MetricsServer | undefined;
  #webhookServer: WebhookServer | undefined;
  readonly #pushes: PushRouter;
  #resync: NodeJS.Timeout | undefined;
  #resourceGroups: ResourceGroupStatusController | undefined;
  /** Registered once in the manager's registry, the first time it leads with the controller on. */
  #resourceGroupMetrics: ResourceGroupControllerMetrics | undefined;
  #userCheck: NodeJS.Timeout | undefined;
  #stopping: Promise<void> | undefined;
  #end: (end: ManagerEnd) => void = () => undefined;
  /** Resolves when the manager ends on its own (never on stop()). */
  readonly ended: Promise<ManagerEnd>;

  private constructor(
    options: ManagerOptions,
    clients: { readonly main: KubeClient; readonly lease: KubeClient },
    elector: LeaderElector,
    access: ClusterAccess | undefined,
  ) {
    this.#o = options;
    this.#log = options.log;
    this.client = clients.main;
    this.#leaseClient = clients.lease;
    this.#elector = elector;
    this.ended = new Promise((resolve) => {
      this.#end = resolve;
    });
    this.metrics = createManagerMetrics({ reconcilerRestarts: options.mode === ReconcilerMode.Process });
    for (const client of [clients.main, clients.lease]) countRequests(client, this.metrics);
    this.#inScope = parseLabelSelector(options.syncSelector ?? "");
    this.#redis = createRedisConnection(options.redisUrl, {
      connectionName: `driftless-manager:${options.identity}`,
      log: (m) => this.#log.warn(m),
    });
    const prefix = options.queuePrefix === undefined ? {} : { prefix: options.queuePrefix };
    this.#queue = new ManagerQueue({
      connection: this.#redis,
      ...prefix,
      // A manager job waits on the API server only; it may be retried more often than a sync pass.
      retry: { attempts: 10, backoffMs: 500 },
      hooks: {
        onJobDone: (outcome) => {
          this.metrics.recordJob(outcome);
          if (outcome.error !== undefined)
            this.#log.warn("manager job failed", {
              queue: outcome.queue,
              result: outcome.result,
              willRetry: outcome.willRetry,
              error: outcome.error.message,
            });
        },
        onError: (error) => this.#log.warn("manager queue error", { error: error.message }),
      },
    });
    this.metrics.watchQueueDepth("manager", this.#queue);
    this.#syncQueues = new SyncQueues(this.#redis, options.queuePrefix);
    this.#redisUsers = new ReconcilerRedisUsers(
      this.#redis,
      options.queuePrefix ?? DEFAULT_PREFIX,
      redisPasswordOf(options.redisUrl),
    );
    this.workload = createWorkload(options, {
      client: this.client,
      redisUsers: this.#redisUsers,
      access,
      metrics: this.metrics,
      onStateChange: (sync) => {
        this.#refreshReconcilerGauge();
        this.#enqueue(sync, "workload");
      },
    });
    this.#watcher = new SyncWatcher({
      client: clients.main,
      syncSelector: options.syncSelector,
      watchDeployments: options.mode === ReconcilerMode.Deployment,
      log: this.#log,
      onSync: (sync, trigger) => this.#enqueue(sync, trigger),
    });
    this.#pushes = new PushRouter({
      watcher: this.#watcher,
      syncQueues: this.#syncQueues,
      isLeader: () => this.#elector.isLeader,
      log: this.#log,
    });
  }

  static async start(options: ManagerOptions): Promise<Manager> {
    // Reconcilers' users only isolate anything when the default user cannot open everything.
    if (redisPasswordOf(options.redisUrl) === "")
      throw new Error("the manager needs the Redis admin password (REDIS_PASSWORD): an open Redis is refused");
    // Every write of the manager (jobs, reconciler setup, tokens, finalizers, status) passes the fence.
    const {
      lease,
      elector,
      client: main,
    } = await fencedClients({
      kubeconfig: options.kubeconfig,
      userAgent: "driftless-manager/0.1.0",
      namespace: RootSyncNamespace,
      name: options.leaseName,
      identity: options.identity,
      log: options.log,
      ...(options.leaderElection === undefined ? {} : { timings: options.leaderElection }),
    });
    // Process mode hands the API server's address and CA on to reconciler processes.
    const access = options.mode === ReconcilerMode.Process ? readClusterAccess(options.kubeconfig) : undefined;
    const manager = new Manager(options, { main, lease }, elector, access);
    await manager.#start();
    return manager;
  }

  get isLeader(): boolean {
    return this.#elector.isLeader;
  }

  get metricsPort(): number | undefined {
    return this.#metricsServer?.port;
  }

  get webhookPort(): number | undefined {
    return this.#webhookServer?.port;
  }

  async #start(): Promise<void> {
    if (this.#o.metricsPort !== undefined) {
      this.#metricsServer = await serveMetrics({
        port: this.#o.metricsPort,
        registry: this.metrics.registry,
        health: () =>
          Promise.resolve({
            healthy: this.#stopping === undefined,
            ready: this.#stopping === undefined && this.#watcher.hasSynced && this.#redis.status === "ready",
            detail: `${this.#elector.isLeader ? "leader" : "standby"}; watches ${this.#watcher.hasSynced ? "synced" : "syncing"}; redis ${this.#redis.status}`,
          }),
      });
    }
    this.#watcher.start();
    if (this.#o.webhook !== undefined) {
      const secret = this.#o.webhook.secret;
      this.#webhookServer = await serveWebhooks({
        port: this.#o.webhook.port,
        secret,
        log: this.#log,
        onResult: (provider, result, syncs) =>
          this.metrics.webhookRequests.inc({ provider, result: webhookRequestResult(result, syncs) }),
        onPush: (push) => this.#pushes.route(push),
      });
    }
    this.#elector.start({ onStartedLeading: () => this.#lead(), onStoppedLeading: () => this.#stepDown() });
    this.#log.info("manager started", {
      mode: this.#o.mode,
      identity: this.#o.identity,
      metricsPort: this.metricsPort,
      webhookPort: this.webhookPort,
      syncSelector: this.#o.syncSelector,
    });
  }

  /** Without the admission policy a reconciler restricted by roleRefs can rewrite its own spec: say so once per leadership. */
  #checkReconcilerWritePolicy(): void {
    missingReconcilerWritePolicy(this.client).then(
      (missing) => {
        if (missing.length > 0)
          this.#log.warn(
            "the admission policy that keeps reconcilers from changing their own sync's spec is missing: apply manifests/reconciler-admission-policy.yaml",
            { missing: missing.join(", ") },
          );
      },
      (error: unknown) => this.#log.warn("could not check the reconciler write policy", { error: String(error) }),
    );
  }

  /** Became the leader: start working through the queue, and look at every sync once. */
  #lead(): void {
    const context: SyncContext = {
      client: this.client,
      workload: this.workload,
      log: this.#log,
      validation: {
        allowFileRepos: this.#o.allowFileRepos,
        allowRepoSyncShellInRendering: this.#o.allowRepoSyncShellInRendering === true,
      },
      inScope: (sync) => this.#inScope(sync.metadata.labels),
      kindUnlisted: (kind) => this.#watcher.unlisted(kind),
      onFinalizerRemoved: (reason) => this.metrics.finalizerRemovals.inc({ reason }),
      requestPass: async (sync, reason) => {
        await this.#syncQueues.get(sync).enqueue("manager", { reason });
      },
      onTornDown: async (sync) => {
        // A sync refused because this one held its reconciler name (reconciler-name.ts) may have it now.
        const name = reconcilerName(sync.kind, sync.namespace, sync.name);
        for (const other of this.#watcher.syncRefs())
          if (
            reconcilerName(other.kind, other.namespace, other.name) === name &&
            (other.kind !== sync.kind || other.namespace !== sync.namespace || other.name !== sync.name)
          )
            this.#enqueue(other, "workload");
        await this.#syncQueues.remove(sync).catch((error: unknown) =>
          this.#log.warn("could not remove the queue of a deleted sync", {
            sync: `${sync.kind}/${sync.namespace}/${sync.name}`,
            error: String(error),
          }),
        );
      },
    };
    this.#queue.worker(
      async (job) => {
        const sync = `${job.sync.kind}/${job.sync.namespace}/${job.sync.name}`;
        // A job fetched as leadership ends goes back to the queue for the next leader.
        this.#elector.fence(`process a manager job for ${sync}`);
        this.#log.debug("manager job started", { sync, job: job.id, action: job.action });
        const timer = this.metrics.reconcileDuration.startTimer();
        let status: "success" | "error" = "error";
        try {
          await reconcileSync(context, job.sync, { attempt: job.attempt, maxAttempts: job.maxAttempts });
          status = "success";
        } finally {
          timer({ status });
          this.#refreshReconcilerGauge();
          this.#log.debug("manager job finished", { sync, job: job.id });
        }
      },
      {
        concurrency: this.#o.concurrency ?? 4,
        // A leader killed mid-job keeps that job locked: its sync waits until the lock expires and the
        // stalled-job check hands the job to the new leader. BullMQ's 30 s + 30 s would hold a sync for
        // up to a minute after a takeover that itself takes ~15 s (the Lease); 10 s + 5 s bounds it.
        lockDurationMs: managerJobLockMs,
        stalledIntervalMs: managerStalledCheckMs,
      },
    );
    const resync = (trigger: ManagerTrigger): void => {
      void this.#watcher
        .synced()
        .then(
          async () => {
            for (const sync of this.#watcher.syncRefs()) this.#enqueue(sync, trigger);
            for (const orphan of await sweepOrphans(this.client, this.#watcher)) this.#enqueue(orphan, trigger);
          },
          (error: unknown) => this.#log.warn("resync skipped", { error: String(error) }),
        )
        .catch((error: unknown) => this.#log.warn("resync failed", { error: String(error) }));
    };
    resync("startup");
    this.#checkReconcilerWritePolicy();
    this.#startResourceGroupStatus();
    // Level-triggered repair of anything a lost job or a missed event left behind.
    this.#resync = setInterval(() => resync("resync"), this.#o.resyncMs);
    // A reconciler whose Redis user is gone (deleted by hand; a restarted Redis also brings the
    // `ready` below) keeps retrying to authenticate: its job re-creates the user.
    this.#userCheck = setInterval(() => {
      this.#redisUsers.missing().then(
        (syncs) => syncs.forEach((sync) => this.#enqueue(sync, "workload")),
        (error: unknown) => this.#log.debug("could not list Redis users", { error: String(error) }),
      );
    }, this.#o.redisUserCheckMs ?? 10_000);
    // Redis back after an outage: what could not be enqueued meanwhile (and, after a restart, every
    // job) is enqueued now rather than at the next resync, minutes away.
    this.#redis.on("ready", () => {
      if (this.#elector.isLeader) resync("resync");
    });
  }

  /**
   * The leader alone writes ResourceGroup status: a standby's writes would be refused by the fence anyway.
   * On by default in process mode only: a cluster runs it as a Deployment of its own
   * (driftless-resource-group-controller), whose identity may read every kind, as the manager's may not.
   */
  #startResourceGroupStatus(): void {
    const byDefault = this.#o.mode === ReconcilerMode.Process && this.#o.syncSelector === undefined;
    if (!(this.#o.resourceGroupController ?? byDefault)) return;
    const serves = (kind: SyncRef["kind"], namespace: string, name: string): boolean =>
      this.#watcher.serves({ kind, namespace, name });
    this.#resourceGroups = new ResourceGroupStatusController({
      client: this.client,
      syncExists: (namespace, name) => serves("RootSync", namespace, name) || serves("RepoSync", namespace, name),
      log: this.#log,
      metrics: (this.#resourceGroupMetrics ??= createResourceGroupControllerMetrics({
        registry: this.metrics.registry,
      })),
    });
    this.#resourceGroups.start();
  }

  /**
   * Lost the lease: take no new job and schedule nothing more at once (a running job's writes are
   * refused by the fence); the shell then stops everything, children included, and exits.
   */
  #stepDown(): void {
    clearInterval(this.#resync);
    clearInterval(this.#userCheck);
    this.#queue
      .pauseWorker()
      .catch((error: unknown) =>
        this.#log.warn("could not pause the manager queue's worker", { error: String(error) }),
      );
    this.#end({ reason: "leadership-lost" });
  }

  #enqueue(sync: SyncRef, trigger: ManagerTrigger): void {
    if (!this.#elector.isLeader || this.#stopping !== undefined) return;
    this.#queue.enqueue(sync, trigger).catch((error: unknown) => {
      // Redis is down: the periodic resync enqueues it again once it is back.
      this.#log.warn("could not enqueue a manager job", {
        sync: `${sync.kind}/${sync.namespace}/${sync.name}`,
        trigger,
        error: String(error),
      });
    });
  }

  #refreshReconcilerGauge(): void {
    const states = this.workload.states();
    for (const state of Object.values(ReconcilerState)) this.metrics.reconcilers.set({ state }, states.get(state) ?? 0);
  }

  /**
   * Graceful shutdown: stop taking webhooks and jobs, let the running job finish, stop child
   * reconcilers, then release the lease (only then may a standby start its own), and close.
   */
  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    clearInterval(this.#resync);
    clearInterval(this.#userCheck);
    await this.#webhookServer?.close();
    const closed = await this.#queue.close({ timeoutMs: 30_000 });
    if (!closed.graceful) this.#log.warn("a manager job did not finish in time; it will run again on the next leader");
    await this.workload.close();
    await this.#resourceGroups?.stop();
    await this.#elector.stop();
    await this.#watcher.stop();
    await this.#syncQueues.close();
    await closeRedisConnection(this.#redis);
    await this.#metricsServer?.close();
    this.client.close();
    this.#leaseClient.close();
    this.#log.info("manager stopped");
  }
}

/** Every request `client` sends, in driftless_kube_requests_total: what the manager writes, by resource. */
function countRequests(client: KubeClient, metrics: ManagerMetrics): void {
  client.requests.onRequest((verb, status, _ms, path) =>
    metrics.kubeRequests.inc({
      verb,
      resource: requestResource(path),
      // As api_duration_seconds: a 404 or 409 is an error, a request that changed nothing.
      status: status >= 200 && status < 400 ? "success" : "error",
    }),
  );
}
