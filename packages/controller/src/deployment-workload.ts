/**
 * `deployment` mode: the reconciler of each sync is a Deployment in config-management-system
 * (deployment-spec.ts), running as its own ServiceAccount (identity.ts). Server-side apply keeps
 * the Deployment as declared (a hand edit of a field we set is reverted on the next job) without
 * fighting fields other controllers own.
 */
import { reconcilerName, RootSyncNamespace, SyncLabel, type RSync } from "@driftless/api";
import type { KubeClient } from "@driftless/kube";
import { ReconcilerState } from "@driftless/metrics";
import type { SyncRef } from "@driftless/queue";
import {
  deploymentAvailable,
  deploymentFailure,
  reconcilerDeployment,
  type DeploymentSettings,
} from "./deployment-spec.ts";
import { ensureIdentity, removeIdentity } from "./identity.ts";
import { KeyedLock } from "./keyed-lock.ts";
import { podFailure } from "./pod-failure.ts";
import { planIdentity } from "./rbac-plan.ts";
import { Resource } from "./resources.ts";
import { ReconcilerMode, syncKeyOf, syncRefOf, type ReconcilerWorkload, type WorkloadStatus } from "./workload.ts";

export const FieldManager = "driftless-manager";

export class DeploymentWorkload implements ReconcilerWorkload {
  readonly mode = ReconcilerMode.Deployment;
  readonly #client: KubeClient;
  readonly #settings: DeploymentSettings;
  readonly #lock = new KeyedLock();
  readonly #states = new Map<string, ReconcilerState>();

  constructor(client: KubeClient, settings: DeploymentSettings) {
    this.#client = client;
    this.#settings = settings;
  }

  ensure(sync: RSync): Promise<WorkloadStatus> {
    const ref = syncRefOf(sync);
    return this.#lock.run(syncKeyOf(ref), async () => {
      await ensureIdentity(this.#client, ref, planIdentity(sync));
      const desired = reconcilerDeployment(sync, this.#settings);
      const applied = await this.#client.patch(
        Resource.Deployment,
        RootSyncNamespace,
        desired.metadata.name,
        desired,
        "apply",
        { fieldManager: FieldManager, force: true },
      );
      const ready = deploymentAvailable(applied);
      this.#states.set(syncKeyOf(ref), ready ? ReconcilerState.Running : ReconcilerState.Starting);
      const name = desired.metadata.name;
      const failure = ready ? undefined : (deploymentFailure(applied) ?? (await this.#podFailure(name)));
      return {
        ready,
        reason: "Deployment",
        message: ready ? `Reconciler deployment ${name} is available` : `Reconciler deployment ${name} is rolling out`,
        ...(failure === undefined ? {} : { failure }),
      };
    });
  }

  /** The first failing pod of the reconciler's Deployment; none when pods cannot be read (older RBAC). */
  async #podFailure(deployment: string): Promise<string | undefined> {
    try {
      const pods = await this.#client.list(Resource.Pod, {
        namespace: RootSyncNamespace,
        labelSelector: `${SyncLabel.DeploymentName}=${deployment}`,
      });
      for (const pod of pods.items) {
        const failure = podFailure(pod);
        if (failure !== undefined) return failure;
      }
    } catch {
      // Without pods, the Deployment's own conditions are all there is to say.
    }
    return undefined;
  }

  teardown(sync: SyncRef): Promise<void> {
    const key = syncKeyOf(sync);
    return this.#lock.run(key, async () => {
      this.#states.set(key, ReconcilerState.Terminating);
      // Background: the garbage collector removes the ReplicaSet and pod; the identity goes now,
      // so a pod still shutting down can no longer act.
      await this.#client.delete(
        Resource.Deployment,
        RootSyncNamespace,
        reconcilerName(sync.kind, sync.namespace, sync.name),
        { propagationPolicy: "Background" },
      );
      await removeIdentity(this.#client, sync);
      this.#states.delete(key);
    });
  }

  states(): ReadonlyMap<ReconcilerState, number> {
    const counts = new Map<ReconcilerState, number>();
    for (const state of this.#states.values()) counts.set(state, (counts.get(state) ?? 0) + 1);
    return counts;
  }

  /** Deployments outlive the manager: nothing to stop. */
  async close(): Promise<void> {}
}
