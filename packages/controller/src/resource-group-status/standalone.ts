/**
 * The ResourceGroup status controller as a process of its own, as Config Sync runs its
 * resource-group-controller: its ClusterRole reads every kind (Secrets included, since a group may list
 * one), which the manager's identity does not, so in a cluster it runs under its own ServiceAccount.
 * One replica leads (a Lease of its own); its status writes pass the lease's fence.
 */
import { Informer, type KubeClient } from "@driftless/kube";
import {
  createResourceGroupControllerMetrics,
  serveMetrics,
  type MetricsServer,
  type ResourceGroupControllerMetrics,
} from "@driftless/metrics";
import type { Logger } from "@driftless/sync";
import { fencedClients, type LeaderElector } from "../leader-election.ts";
import { Resource } from "../resources.ts";
import { ResourceGroupStatusController } from "./controller.ts";

export interface StandaloneResourceGroupControllerOptions {
  readonly kubeconfig: string | undefined;
  /** Where its Lease is kept (the namespace it runs in). */
  readonly leaseNamespace: string;
  readonly leaseName: string;
  /** Unique per replica (pod name, or host and pid). */
  readonly identity: string;
  readonly log: Logger;
  /** Serves /metrics, /healthz and /readyz here (0: a free port); undefined serves nothing. */
  readonly metricsPort?: number;
}

/** Why it ended on its own: leadership lost (another replica may lead now; the shell exits non-zero). */
export interface StandaloneEnd {
  readonly reason: string;
}

export class StandaloneResourceGroupController {
  readonly #elector: LeaderElector;
  readonly #controller: ResourceGroupStatusController;
  readonly #syncs: readonly Informer[];
  readonly #metrics: ResourceGroupControllerMetrics;
  #server: MetricsServer | undefined;
  readonly ended: Promise<StandaloneEnd>;
  #end: (end: StandaloneEnd) => void = () => undefined;
  #stopped = false;

  private constructor(elector: LeaderElector, client: KubeClient, log: Logger) {
    this.#elector = elector;
    // Only which syncs exist is read: a group named as one is its reconciler's, even before it is labelled.
    this.#syncs = [Resource.RootSync, Resource.RepoSync].map(
      (resource) =>
        new Informer(client, resource, {
          metadataOnly: true,
          onError: (error) => log.debug("sync watch failed; retrying", { error: error.message }),
        }),
    );
    this.#metrics = createResourceGroupControllerMetrics();
    this.#controller = new ResourceGroupStatusController({
      client,
      syncExists: (namespace, name) => this.#syncs.some((syncs) => syncs.get(namespace, name) !== undefined),
      log,
      metrics: this.#metrics,
    });
    this.ended = new Promise((resolve) => (this.#end = resolve));
  }

  static async start(options: StandaloneResourceGroupControllerOptions): Promise<StandaloneResourceGroupController> {
    const { elector, client } = await fencedClients({
      kubeconfig: options.kubeconfig,
      userAgent: "driftless-resource-group-controller/0.1.0",
      namespace: options.leaseNamespace,
      name: options.leaseName,
      identity: options.identity,
      log: options.log,
    });
    const self = new StandaloneResourceGroupController(elector, client, options.log);
    if (options.metricsPort !== undefined)
      self.#server = await serveMetrics({
        port: options.metricsPort,
        registry: self.#metrics.registry,
        // A standby is ready: it takes over when the leader's lease runs out.
        health: () =>
          Promise.resolve({
            healthy: !self.#stopped,
            ready: !self.#stopped,
            detail: elector.isLeader ? "leader" : "standby",
          }),
      });
    elector.start({
      onStartedLeading: () => {
        for (const syncs of self.#syncs) syncs.start();
        // Which syncs exist is known before any group is judged: a group named as one is never written.
        void Promise.all(self.#syncs.map((syncs) => syncs.synced())).then(
          () => {
            if (!self.#stopped) self.#controller.start();
          },
          () => undefined, // stopped before the first list
        );
      },
      onStoppedLeading: () => self.#end({ reason: "lost the leader lease" }),
    });
    return self;
  }

  get isLeader(): boolean {
    return this.#elector.isLeader;
  }

  get metricsPort(): number | undefined {
    return this.#server?.port;
  }

  /** Stops its watches, then releases the lease so a standby takes over at once. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#controller.stop();
    await Promise.all(this.#syncs.map((syncs) => syncs.stop()));
    await this.#elector.stop();
    await this.#server?.close();
  }
}
