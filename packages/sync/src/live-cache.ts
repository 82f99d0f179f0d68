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
  }

  forget(mapping: ResourceMapping, namespace: string | undefined, name: string): void {
    this.informers.get(keyOf(mapping))?.informer.forget(namespace, name);
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
