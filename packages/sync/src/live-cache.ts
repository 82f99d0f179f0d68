import { ManagedByValue, ManagedLabel } from "@driftless/api";
import { digestRecord, type LiveState } from "@driftless/applier";
import {
  Informer,
  withoutManagedFields,
  type KubeClient,
  type KubeObject,
  type ResourceMapping,
} from "@driftless/kube";

export type InformerListener = (
  event: "add" | "update" | "delete",
  mapping: ResourceMapping,
  object: KubeObject,
) => void;

/** Writes to one resource type in one plan after which its watch is paused until the plan is done. */
const pauseAfterWrites = 100;

/** A plan being applied (LiveState.applyingPlan): its writes per resource type. */
interface PlanInProgress {
  readonly keepWatching: (mapping: ResourceMapping) => boolean;
  readonly writes: Map<string, number>;
}

/**
 * Current state from watch caches: one informer per managed resource type, limited to objects that
 * carry our managed-by label (so memory follows what we manage, not the cluster), scoped to the
 * sync's namespace for a RepoSync. A pass over an unchanged cluster reads memory only; a miss (an
 * object we have not labelled yet) falls through to create, and a 409 to a fresh GET.
 */
export class InformerLiveState implements LiveState {
  private readonly client: KubeClient;
  private readonly namespace: string | undefined;
  private readonly informers = new Map<string, { informer: Informer; mapping: ResourceMapping }>();
  private readonly listeners = new Set<InformerListener>();
  private readonly transform: (obj: KubeObject) => KubeObject;
  private plan: PlanInProgress | undefined;

  constructor(
    client: KubeClient,
    options: {
      readonly namespace?: string;
      /** The last-applied annotation: cached objects keep a digest of it (@driftless/applier record-digest). */
      readonly recordAnnotation?: string;
    } = {},
  ) {
    this.client = client;
    this.namespace = options.namespace;
    const digest = options.recordAnnotation === undefined ? undefined : digestRecord(options.recordAnnotation);
    this.transform =
      digest === undefined ? withoutManagedFields : (obj: KubeObject) => digest(withoutManagedFields(obj));
  }

  async get(mapping: ResourceMapping, namespace: string | undefined, name: string): Promise<KubeObject | undefined> {
    const informer = await this.informerFor(mapping);
    return informer.get(namespace, name);
  }

  cachedResourceVersion(mapping: ResourceMapping, namespace: string | undefined, name: string): string | undefined {
    const entry = this.informers.get(keyOf(mapping));
    return entry?.informer.hasSynced === true ? entry.informer.resourceVersionOf(namespace, name) : undefined;
  }

  remember(mapping: ResourceMapping, object: KubeObject): void {
    this.informers.get(keyOf(mapping))?.informer.upsert(object);
    this.countWrite(mapping);
  }

  forget(mapping: ResourceMapping, namespace: string | undefined, name: string): void {
    this.informers.get(keyOf(mapping))?.informer.forget(namespace, name);
    this.countWrite(mapping);
  }

  /**
   * A bulk write (the first sync of a repository, a commit that changes every object) gets each of
   * its writes back as a watch event, one at a time: measured at 10,000 ConfigMaps, each cost the
   * API server ~80 µs and this process ~55 µs, a tenth of the write itself. Past
   * {@link pauseAfterWrites} writes to one type in a plan, that type's watch is paused; when the plan
   * is done it resumes from where it stopped. The server replays what happened meanwhile in one burst
   * (~30 µs per event measured; 0.6–1.3 s for 10,000, alongside the pass's inventory and status
   * steps), and our own writes among it are dropped unparsed (Informer's echoes). Changes others
   * made meanwhile arrive then, and the remediator checks them against the new declaration.
   */
  applyingPlan(keepWatching: (mapping: ResourceMapping) => boolean): () => void {
    const plan: PlanInProgress = { keepWatching, writes: new Map() };
    this.plan = plan;
    return () => {
      if (this.plan === plan) this.plan = undefined;
      for (const { informer } of this.informers.values()) informer.resume();
    };
  }

  private countWrite(mapping: ResourceMapping): void {
    const plan = this.plan;
    if (plan === undefined) return;
    const key = keyOf(mapping);
    const writes = (plan.writes.get(key) ?? 0) + 1;
    plan.writes.set(key, writes);
    if (writes === pauseAfterWrites && !plan.keepWatching(mapping)) this.informers.get(key)?.informer.pause();
  }

  refresh(mapping: ResourceMapping, namespace: string | undefined, name: string): Promise<KubeObject | undefined> {
    return this.client.get(mapping, namespace, name);
  }

  /** Called for every watch event on a managed type (the remediator listens). */
  onEvent(listener: InformerListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async stop(): Promise<void> {
    await Promise.all([...this.informers.values()].map(({ informer }) => informer.stop()));
    this.informers.clear();
  }

  private async informerFor(mapping: ResourceMapping): Promise<Informer> {
    const key = keyOf(mapping);
    let entry = this.informers.get(key);
    if (entry === undefined) {
      const informer = new Informer(this.client, mapping, {
        ...(mapping.namespaced && this.namespace !== undefined ? { namespace: this.namespace } : {}),
        labelSelector: `${ManagedLabel.ManagedBy}=${ManagedByValue}`,
        // managedFields is often half an object and never read here; at 10,000 objects that is tens of MiB.
        transform: this.transform,
      });
      entry = { informer, mapping };
      this.informers.set(key, entry);
      for (const event of ["add", "update", "delete"] as const) {
        informer.on(event, (object) => {
          for (const listener of this.listeners) listener(event, mapping, object);
        });
      }
      informer.start();
    }
    await entry.informer.synced();
    return entry.informer;
  }
}

function keyOf(mapping: ResourceMapping): string {
  return `${mapping.group}/${mapping.version}/${mapping.resource}`;
}
