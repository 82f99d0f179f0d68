import type { KubeClient, ResourceMapping } from "@driftless/kube";
import type { JsonObject } from "./desired.ts";
import { computeStatus, HealthStatus, type Health } from "./kstatus.ts";
import type { LiveState } from "./live-state.ts";
import { asObject, field } from "./json-fields.ts";

const podMapping: ResourceMapping = {
  group: "",
  version: "v1",
  kind: "Pod",
  resource: "pods",
  namespaced: true,
  verbs: ["get", "list", "watch"],
};

/** The kinds whose Pods cli-utils' status watcher reads (a Deployment is read alone, its ReplicaSets aside). */
const podControllers: ReadonlySet<string> = new Set(["apps/ReplicaSet", "apps/StatefulSet"]);

/**
 * How long a Pod list answers the wait's polls of one controller. The wait reads the (cached) live state every
 * 250 ms, but each Pod list is a request: a hundred StatefulSets waited for would send 400 a second.
 */
const podListReuseMs = 5_000;

/** One read of a waited-for object. */
export interface WaitReading {
  /** kstatus of the object alone, as Config Sync's ResourceGroup controller reports it. */
  readonly object: HealthStatus;
  /** What the wait reads: `object`, or Failed for a ReplicaSet or StatefulSet with a Failed Pod. */
  readonly wait: HealthStatus;
}

/**
 * An object's health as Config Sync's applier waits on it: kstatus of the object, and for an InProgress
 * ReplicaSet or StatefulSet Failed when one of the Pods its selector matches is Failed (crash-looping,
 * unschedulable for 15 s), as cli-utils' pod-controller status reader says so the wait ends.
 */
export class WaitHealth {
  readonly #live: Pick<LiveState, "get">;
  readonly #pods: Pick<KubeClient, "list"> | undefined;
  readonly #listed = new Map<string, { readonly at: number; readonly pods: readonly JsonObject[] }>();

  constructor(live: Pick<LiveState, "get">, pods?: Pick<KubeClient, "list">) {
    this.#live = live;
    this.#pods = pods;
  }

  async read(mapping: ResourceMapping, namespace: string | undefined, name: string): Promise<WaitReading> {
    const live = await this.#live.get(mapping, mapping.namespaced ? namespace : undefined, name);
    const own = computeStatus(live);
    const alone = { object: own.status, wait: own.status };
    if (live === undefined || own.status !== HealthStatus.InProgress || namespace === undefined) return alone;
    if (!podControllers.has(`${mapping.group}/${mapping.kind}`)) return alone;
    const selector = selectorQuery(field(live, "spec", "selector"));
    if (selector === undefined || this.#pods === undefined) return alone;
    const pods = await this.#podsOf(namespace, selector);
    return { object: own.status, wait: withPods(own, pods).status };
  }

  async #podsOf(namespace: string, labelSelector: string): Promise<readonly JsonObject[]> {
    const key = `${namespace}/${labelSelector}`;
    const kept = this.#listed.get(key);
    if (kept !== undefined && Date.now() - kept.at < podListReuseMs) return kept.pods;
    let pods: readonly JsonObject[];
    try {
      pods = (await this.#pods?.list(podMapping, { namespace, labelSelector, resourceVersion: "0" }))?.items ?? [];
    } catch {
      // Pods not listable (a RepoSync reconciler without the right): the controller is read alone.
      pods = [];
    }
    this.#listed.set(key, { at: Date.now(), pods });
    return pods;
  }
}

/** A controller's health given its Pods: an InProgress one with a Failed Pod is Failed, as cli-utils reads it. */
export function withPods(own: Health, pods: readonly JsonObject[], now: number = Date.now()): Health {
  if (own.status !== HealthStatus.InProgress) return own;
  const failed = pods.filter((pod) => computeStatus(pod, now).status === HealthStatus.Failed).length;
  if (failed === 0) return own;
  return { status: HealthStatus.Failed, message: `${failed} pods have failed`, conditions: [] };
}

/**
 * spec.selector as a list's labelSelector, as metav1.LabelSelectorAsSelector writes it ("" selects every
 * Pod); undefined when there is none or it cannot be read (cli-utils cannot read the Pods then either).
 */
export function selectorQuery(selector: unknown): string | undefined {
  const s = asObject(selector);
  if (s === undefined) return undefined;
  const terms: string[] = [];
  const labels = s["matchLabels"] ?? {};
  const matchLabels = asObject(labels);
  if (matchLabels === undefined) return undefined;
  for (const [key, value] of Object.entries(matchLabels)) {
    if (typeof value !== "string") return undefined;
    terms.push(`${key}=${value}`);
  }
  const expressions = s["matchExpressions"] ?? [];
  if (!Array.isArray(expressions)) return undefined;
  for (const entry of expressions as unknown[]) {
    const term = expressionTerm(asObject(entry));
    if (term === undefined) return undefined;
    terms.push(term);
  }
  return terms.join(",");
}

function expressionTerm(e: JsonObject | undefined): string | undefined {
  const key = e?.["key"];
  const values = e?.["values"] ?? [];
  if (typeof key !== "string" || !Array.isArray(values) || !values.every((v) => typeof v === "string")) {
    return undefined;
  }
  const list = `(${[...(values as string[])].sort().join(",")})`;
  switch (e?.["operator"]) {
    case "In":
      return values.length === 0 ? undefined : `${key} in ${list}`;
    case "NotIn":
      return values.length === 0 ? undefined : `${key} notin ${list}`;
    case "Exists":
      return values.length === 0 ? key : undefined;
    case "DoesNotExist":
      return values.length === 0 ? `!${key}` : undefined;
    default:
      return undefined;
  }
}
