import type { DriftlessError } from "@driftless/api";
import type { KubeClient, KubeObject, ResourceMapping } from "@driftless/kube";

/**
 * Where the applier reads current state. The reconciler backs it with watch caches (informers), so
 * a pass over an unchanged cluster reads memory, not the API server; `DirectLiveState` GETs.
 */
export interface LiveState {
  get(mapping: ResourceMapping, namespace: string | undefined, name: string): Promise<KubeObject | undefined>;
  /** Write-through after our own write, so the next read does not see the older version. */
  remember(mapping: ResourceMapping, object: KubeObject): void;
  forget(mapping: ResourceMapping, namespace: string | undefined, name: string): void;
  /** Re-reads one object from the API server (after a 409), bypassing any cache. */
  refresh(mapping: ResourceMapping, namespace: string | undefined, name: string): Promise<KubeObject | undefined>;
  /**
   * The cached copy's resourceVersion without reading the object, when the state is a cache that
   * already holds this type; undefined otherwise (then nothing is skipped on its account).
   */
  cachedResourceVersion?(mapping: ResourceMapping, namespace: string | undefined, name: string): string | undefined;
  /**
   * Called when a plan starts; the returned function when it is done. A state that watches may stop
   * watching a resource type the plan holds many objects of, once the plan writes one (each write
   * would come back as a watch event, costing the API server and this process a tenth as much again
   * as the write) and catch up once the plan is done.
   */
  applyingPlan?(plan: PlanOutline): () => void;
  /**
   * The types about to be read: a state that caches may start reading them all now, so that their
   * first lists overlap instead of running one after another as the applier reaches each type.
   */
  prepare?(mappings: readonly ResourceMapping[]): void;
  /**
   * One error for each type whose watch the API server refuses (RBAC): drift on its objects is not seen
   * until a full pass, so the pass reports it, as Config Sync's applier fails without `watch`.
   */
  watchRefusals?(): readonly DriftlessError[];
}

/** What a live state learns about a plan before it is applied. */
export interface PlanOutline {
  /** How many objects of the mapping's group and kind the plan holds. */
  objectsOf(mapping: ResourceMapping): number;
  /** Types the applier waits on through this state (depends-on): they must stay watched. */
  keepWatching(mapping: ResourceMapping): boolean;
}

export class DirectLiveState implements LiveState {
  private readonly client: KubeClient;

  constructor(client: KubeClient) {
    this.client = client;
  }

  get(mapping: ResourceMapping, namespace: string | undefined, name: string): Promise<KubeObject | undefined> {
    return this.client.get(mapping, namespace, name);
  }

  remember(): void {}

  forget(): void {}

  refresh(mapping: ResourceMapping, namespace: string | undefined, name: string): Promise<KubeObject | undefined> {
    return this.client.get(mapping, namespace, name);
  }
}
