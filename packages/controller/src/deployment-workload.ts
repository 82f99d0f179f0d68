/**
 * `deployment` mode: the reconciler of each sync is a Deployment in config-management-system
 * (deployment-spec.ts), running as its own ServiceAccount (identity.ts). Server-side apply keeps
 * the Deployment as declared (a hand edit of a field we set is reverted on the next job) without
 * fighting fields other controllers own.
 *
 * Each pod authenticates to Redis as the sync's own ACL user, with a password derived from the
 * pod template's spec hash and a random nonce of its rollout (redis-rollout.ts): it rotates whenever
 * the pod is replaced. The new password is added
 * beside the old one and written to the pod's Secret before the Deployment changes; the old one is
 * dropped once the new pod is available, so the old pod never loses Redis mid-pass. A rollout whose
 * Deployment the API server refuses keeps its nonce (in memory) for the next attempt at the same
 * template, so retries add no password: before, each attempt drew a new one (the live Deployment still
 * had the old template) and added it beside the others.
 *
 * Objects of a reconciler name another sync holds (reconciler-name.ts) are neither written nor deleted.
 */
import { reconcilerName, RootSyncNamespace, SyncLabel, type RSync } from "@driftless/api";
import { isInvalid, type KubeClient, type KubeObject } from "@driftless/kube";
import { ReconcilerState } from "@driftless/metrics";
import type { SyncRef } from "@driftless/queue";
import {
  deploymentAvailable,
  deploymentFailure,
  podTemplateHash,
  reconcilerDeployment,
  RedisCredentialAnnotation,
  SpecHashAnnotation,
  SyncGenerationLabel,
  type DeploymentSettings,
} from "./deployment-spec.ts";
import { ensureIdentity, removeIdentity } from "./identity.ts";
import { KeyedLock } from "./keyed-lock.ts";
import { podFailure } from "./pod-failure.ts";
import { planIdentity } from "./rbac-plan.ts";
import { createRedisSecret, deleteRedisSecret, writeRedisSecret } from "./redis-secret.ts";
import { redisRollout } from "./redis-rollout.ts";
import { assertReconcilerNameFree, nameOf, reconcilerNameHolder } from "./reconciler-name.ts";
import { redisPasswordHash, type RedisCredential, type ReconcilerRedisUsers } from "./redis-users.ts";
import { Resource } from "./resources.ts";
import {
  ReconcilerMode,
  syncKeyOf,
  syncRefOf,
  type ReconcilerWorkload,
  type TeardownPending,
  type WorkloadStatus,
} from "./workload.ts";

export const FieldManager = "driftless-manager";

export class DeploymentWorkload implements ReconcilerWorkload {
  readonly mode = ReconcilerMode.Deployment;
  readonly #client: KubeClient;
  readonly #settings: DeploymentSettings;
  readonly #users: ReconcilerRedisUsers;
  readonly #lock = new KeyedLock();
  readonly #states = new Map<string, ReconcilerState>();
  /**
   * By sync: the rollout whose Deployment was not applied yet (refused, or the manager failed between
   * the Secret and the apply), reused while the template is the same; gone once the apply succeeds.
   */
  readonly #pending = new Map<string, { readonly hash: string; readonly nonce: string; secretWritten: boolean }>();

  constructor(client: KubeClient, settings: DeploymentSettings, users: ReconcilerRedisUsers) {
    this.#client = client;
    this.#settings = settings;
    this.#users = users;
  }

  ensure(given: RSync): Promise<WorkloadStatus> {
    const ref = syncRefOf(given);
    const key = syncKeyOf(ref);
    // By reconciler name: two syncs of one name are never set up at once, so the second sees the first's objects.
    return this.#lock.run(nameOf(ref), async () => {
      const name = reconcilerName(ref.kind, ref.namespace, ref.name);
      const live = await this.#client.get(Resource.Deployment, RootSyncNamespace, name);
      assertReconcilerNameFree(ref, [live]);
      const sync = withTemplateGeneration(given, live);
      await ensureIdentity(this.#client, ref, planIdentity(sync));
      const hash = podTemplateHash(sync, this.#settings);
      const pending = this.#pending.get(key);
      const retry = pending?.hash === hash ? pending : undefined;
      const rollout = redisRollout(
        live,
        podAnnotation(live, SpecHashAnnotation),
        hash,
        retry === undefined ? undefined : () => retry.nonce,
      );
      const credential = await this.#ensureRedisUser(ref, rollout.generation);
      const fingerprint = redisFingerprint(credential.password);
      // A new password (or a first pod) goes into the Secret before the pod that reads it is created.
      const rotating = podAnnotation(live, RedisCredentialAnnotation) !== fingerprint;
      if (rotating) {
        const attempt = retry?.nonce === rollout.nonce ? retry : { hash, nonce: rollout.nonce, secretWritten: false };
        this.#pending.set(key, attempt);
        if (!attempt.secretWritten) await writeRedisSecret(this.#client, ref, credential);
        attempt.secretWritten = true;
      }
      const desired = reconcilerDeployment(sync, this.#settings, fingerprint, rollout.nonce);
      const applied = await this.#apply(desired, live);
      // The Deployment carries the rollout's nonce now: every later attempt reads it from there.
      this.#pending.delete(key);
      const ready = deploymentAvailable(applied);
      // The pod of this template runs: no one uses an older password any more.
      if (ready) await this.#users.ensure(ref, credential.password, { only: true });
      // A pod that cannot start may lack its Secret (deleted by hand): put it back.
      else if (!rotating) await createRedisSecret(this.#client, ref, credential);
      const status = await this.#statusOf(applied);
      this.#states.set(key, metricState(status));
      return status;
    });
  }

  /**
   * Applies the reconciler Deployment. One the API server refuses because a field it cannot change differs
   * (Config Sync's reconciler Deployment, whose selector is `app` and `configsync.gke.io/deployment-name`) is
   * deleted and created again, as Config Sync's reconciler-manager does: no reconciler of this name was running
   * for driftless, so nothing is lost, where the sync otherwise stayed Stalled (KNV2009) for good.
   */
  async #apply(desired: KubeObject, live: KubeObject | undefined): Promise<KubeObject> {
    const apply = () =>
      this.#client.patch(Resource.Deployment, RootSyncNamespace, desired.metadata.name, desired, "apply", {
        fieldManager: FieldManager,
        force: true,
      });
    try {
      return await apply();
    } catch (error) {
      const uid = live?.metadata.uid;
      if (!refusedAsImmutable(error) || uid === undefined) throw error;
      // Only the object read: a Deployment re-created by someone since is judged on the next attempt.
      await this.#client.delete(Resource.Deployment, RootSyncNamespace, desired.metadata.name, {
        propagationPolicy: "Background",
        preconditions: { uid },
      });
      return await apply();
    }
  }

  running(sync: SyncRef): Promise<WorkloadStatus | undefined> {
    return this.#lock.run(nameOf(sync), async () => {
      const live = await this.#client.get(Resource.Deployment, RootSyncNamespace, nameOf(sync));
      // Another sync's Deployment of the same name runs no reconciler for this one.
      if (live === undefined || reconcilerNameHolder(sync, [live.metadata.labels]) !== undefined) return undefined;
      const status = await this.#statusOf(live);
      const key = syncKeyOf(sync);
      const known = this.#states.get(key);
      if (known !== undefined && known !== ReconcilerState.Terminating) this.#states.set(key, metricState(status));
      return status;
    });
  }

  async #statusOf(deployment: KubeObject): Promise<WorkloadStatus> {
    const name = deployment.metadata.name;
    const ready = deploymentAvailable(deployment);
    const failure = ready ? undefined : (deploymentFailure(deployment) ?? (await this.#podFailure(name)));
    return {
      ready,
      reason: "Deployment",
      message: ready ? `Reconciler deployment ${name} is available` : `Reconciler deployment ${name} is rolling out`,
      ...(failure === undefined ? {} : { failure }),
    };
  }

  /** The sync's Redis user, with the password of the current pod template's rollout added (older ones kept). */
  async #ensureRedisUser(ref: SyncRef, generation: string): Promise<RedisCredential> {
    const password = this.#users.derivedPassword(ref, generation);
    await this.#users.ensure(ref, password, { only: false });
    return { username: this.#users.username(ref), password };
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

  teardown(sync: SyncRef, { wait }: { readonly wait: boolean } = { wait: true }): Promise<TeardownPending | undefined> {
    const key = syncKeyOf(sync);
    return this.#lock.run(nameOf(sync), async () => {
      this.#states.set(key, ReconcilerState.Terminating);
      this.#pending.delete(key);
      const name = reconcilerName(sync.kind, sync.namespace, sync.name);
      // Another sync of the same reconciler name holds the Deployment, its Secret and the ServiceAccount: they stay.
      const [deployment, account] = await Promise.all([
        this.#client.get(Resource.Deployment, RootSyncNamespace, name),
        this.#client.get(Resource.ServiceAccount, RootSyncNamespace, name),
      ]);
      const heldByAnother =
        reconcilerNameHolder(sync, [deployment?.metadata.labels, account?.metadata.labels]) !== undefined;
      if (!heldByAnother) {
        // Background: the garbage collector removes the ReplicaSet and pod once the Deployment is gone; the
        // identity goes then, so a pod still shutting down can no longer act.
        const deletion = await this.#client.deleteWithResult(Resource.Deployment, RootSyncNamespace, name, {
          propagationPolicy: "Background",
        });
        // Held by a finalizer of someone else's, its pods run on: they keep their identity and Redis, and the
        // sync its finalizer, until it is gone (the Deployment watch brings the sync back then), as Config Sync's.
        if (deletion === "deleting" && wait) return deploymentTerminating(name);
        await deleteRedisSecret(this.#client, sync);
      }
      // The Redis user is the sync's own (named after its queue), whoever holds the reconciler name.
      await this.#users.remove(sync);
      await removeIdentity(this.#client, sync, { keepNamed: heldByAnother });
      this.#states.delete(key);
      return undefined;
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

/**
 * Config Sync's Reconciling message for a reconciler Deployment its teardown waits on, word for word (its e2e
 * tests match it): its manager's wait for the deletion times out and is retried; driftless's waits for the event.
 */
function deploymentTerminating(name: string): TeardownPending {
  const id = `${RootSyncNamespace}/${name}`;
  return {
    reason: "Deployment",
    message: `deleting reconciler deployment: Deployment (${id}) Terminating: failed to watch for deletion of Deployment: ${id}: timed out waiting for the condition`,
  };
}

/**
 * An apply refused for changing a field the API server keeps as created (a Deployment's selector). Narrower
 * than Config Sync's any-Invalid: an invalid override must not take down a reconciler that runs.
 */
function refusedAsImmutable(error: unknown): boolean {
  return isInvalid(error) && error.message.includes("field is immutable");
}

/** A short fingerprint of a password for the pod template: enough to tell two apart, useless to guess one. */
function redisFingerprint(password: string): string {
  return redisPasswordHash(password).slice(0, 16);
}

/**
 * The sync as its pod template should see it. Marking a sync with finalizers deleted bumps its generation without
 * any spec change; the template's generation label would roll the pod that is running the finalizer, so a sync
 * being deleted keeps the generation its running template has.
 */
function withTemplateGeneration(sync: RSync, live: KubeObject | undefined): RSync {
  if (sync.metadata.deletionTimestamp === undefined) return sync;
  const labels = (live?.["spec"] as { template?: { metadata?: { labels?: Record<string, string> } } } | undefined)
    ?.template?.metadata?.labels;
  const running = Number(labels?.[SyncGenerationLabel]);
  return Number.isInteger(running) ? { ...sync, metadata: { ...sync.metadata, generation: running } } : sync;
}

function podAnnotation(deployment: KubeObject | undefined, key: string): string | undefined {
  const template = (deployment?.["spec"] as { template?: { metadata?: { annotations?: Record<string, string> } } })
    ?.template;
  return template?.metadata?.annotations?.[key];
}

/**
 * driftless_reconcilers' state of a reconciler Deployment: failed while the Deployment or its pod reports
 * why it cannot run (the sync's Stalled ReconcilerFailed), as process mode's failed child, so the
 * DriftlessReconcilerFailed alert fires in deployment mode too; starting while it rolls out.
 */
function metricState(status: WorkloadStatus): ReconcilerState {
  if (status.ready) return ReconcilerState.Running;
  return status.failure === undefined ? ReconcilerState.Starting : ReconcilerState.Failed;
}
