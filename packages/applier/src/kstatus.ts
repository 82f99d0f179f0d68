import type { JsonObject } from "./desired.ts";
import { asObject, field } from "./json-fields.ts";

/** kstatus-style health of a live object, as the ResourceGroup reports it. */
export const HealthStatus = {
  Current: "Current",
  InProgress: "InProgress",
  Failed: "Failed",
  Terminating: "Terminating",
  NotFound: "NotFound",
  Unknown: "Unknown",
} as const;
export type HealthStatus = (typeof HealthStatus)[keyof typeof HealthStatus];

/** The standard condition kstatus reads an object's state as (Reconciling while InProgress, Stalled when Failed). */
export interface HealthCondition {
  readonly type: "Reconciling" | "Stalled";
  readonly status: "True";
  readonly reason: string;
  readonly message: string;
  /** The transition time of the object's own condition this one was read from, when there is one. */
  readonly lastTransitionTime?: string;
}

/** What kstatus computes for an object: its status, why, and the condition it synthesizes. */
export interface Health {
  readonly status: HealthStatus;
  readonly message: string;
  readonly conditions: readonly HealthCondition[];
}

/** One entry of an object's status.conditions, as kstatus reads it (missing strings are ""). */
interface ObjectCondition {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
  readonly message: string;
  readonly lastTransitionTime?: string;
}

/** The object as a rule reads it: raw fields, parsed conditions, and the clock (a Pod's schedule window). */
interface Subject {
  readonly object: JsonObject;
  readonly kind: string;
  readonly conditions: readonly ObjectCondition[];
  readonly now: number;
}

type KindRule = (subject: Subject) => Health;

/**
 * The health of a live object, computed as cli-utils' kstatus (which Config Sync uses) computes it:
 * deletion, then observedGeneration, then the standard Reconciling/Stalled conditions; then the rules
 * of the built-in kinds; then a Ready condition; else Current. What kstatus cannot read is Unknown.
 */
export function computeStatus(live: JsonObject | undefined, now: number = Date.now()): Health {
  if (live === undefined) return result(HealthStatus.NotFound, "Resource not found");
  const metadata = asObject(live["metadata"]) ?? {};
  const deletion = metadata["deletionTimestamp"];
  if (deletion !== undefined && typeof deletion !== "string") return unreadable("metadata.deletionTimestamp");
  if (typeof deletion === "string" && deletion !== "") {
    return result(HealthStatus.Terminating, "Resource scheduled for deletion");
  }
  const kind = typeof live["kind"] === "string" ? live["kind"] : "";
  const untyped = untypedGeneration(live);
  if (untyped !== undefined) return unreadable(untyped);
  const generation = generationNotObserved(live, kind);
  if (generation !== undefined) return generation;
  const conditions = readConditions(live);
  if (conditions === undefined) return result(HealthStatus.Unknown, "status.conditions cannot be read");
  const standard = standardConditions(conditions);
  if (standard !== undefined) return standard;
  const rule = kindRules[ruleKey(live, kind)];
  if (rule !== undefined) return rule({ object: live, kind, conditions, now });
  return readyCondition(conditions) ?? result(HealthStatus.Current, "Resource is current");
}

/** The kstatus status of a live object (`computeStatus` without the why). */
export function computeHealth(live: JsonObject | undefined): HealthStatus {
  return computeStatus(live).status;
}

function result(status: HealthStatus, message: string, conditions: readonly HealthCondition[] = []): Health {
  return { status, message, conditions };
}

function inProgress(reason: string, message: string): Health {
  return result(HealthStatus.InProgress, message, [{ type: "Reconciling", status: "True", reason, message }]);
}

function failed(reason: string, message: string, from?: ObjectCondition): Health {
  const since = from?.lastTransitionTime;
  return result(HealthStatus.Failed, message, [
    { type: "Stalled", status: "True", reason, message, ...(since === undefined ? {} : { lastTransitionTime: since }) },
  ]);
}

/** kstatus cannot read a field that is there but not of its type (null included): the status is Unknown. */
function unreadable(path: string): Health {
  return result(HealthStatus.Unknown, `${path} cannot be read`);
}

/**
 * The generation field that is set but not an integer, as kstatus reads them: metadata.generation, and
 * status.observedGeneration only when there is a generation (a custom resource's status may hold anything).
 */
function untypedGeneration(live: JsonObject): string | undefined {
  const generation = field(live, "metadata", "generation");
  if (generation === undefined) return undefined;
  if (!isInteger(generation)) return "metadata.generation";
  const observed = field(live, "status", "observedGeneration");
  return observed === undefined || isInteger(observed) ? undefined : "status.observedGeneration";
}

function isInteger(value: unknown): boolean {
  return typeof value === "number" && Number.isInteger(value);
}

// Any difference, not only an older observedGeneration: a controller that saw a newer spec (the
// object re-created meanwhile) has not reported on this one.
function generationNotObserved(live: JsonObject, kind: string): Health | undefined {
  const generation = field(live, "metadata", "generation");
  const observed = field(live, "status", "observedGeneration");
  if (typeof generation !== "number" || typeof observed !== "number" || observed === generation) return undefined;
  return inProgress(
    "LatestGenerationNotObserved",
    `${kind} generation is ${generation}, but latest observed generation is ${observed}`,
  );
}

/** The first Reconciling=True or Stalled=True condition decides, whatever the kind. */
function standardConditions(conditions: readonly ObjectCondition[]): Health | undefined {
  for (const c of conditions) {
    if (c.type === "Reconciling" && c.status === "True") return inProgress(c.reason, c.message);
    if (c.type === "Stalled" && c.status === "True") return failed(c.reason, c.message, c);
  }
  return undefined;
}

function readyCondition(conditions: readonly ObjectCondition[]): Health | undefined {
  const ready = conditions.find((c) => c.type === "Ready" && ["True", "False", "Unknown"].includes(c.status));
  if (ready === undefined) return undefined;
  if (ready.status === "True") return result(HealthStatus.Current, "Resource is Ready");
  return inProgress(ready.reason, ready.message);
}

/** kstatus keys its kind rules by group and kind: a custom resource named Deployment is not one. */
function ruleKey(live: JsonObject, kind: string): string {
  const apiVersion = typeof live["apiVersion"] === "string" ? live["apiVersion"] : "";
  const slash = apiVersion.indexOf("/");
  return slash === -1 ? kind : `${apiVersion.slice(0, slash)}/${kind}`;
}

const alwaysReady: KindRule = () => result(HealthStatus.Current, "Resource is always ready");

const kindRules: Readonly<Record<string, KindRule>> = {
  Service: serviceHealth,
  Pod: podHealth,
  Secret: alwaysReady,
  ConfigMap: alwaysReady,
  PersistentVolumeClaim: pvcHealth,
  "apps/StatefulSet": statefulSetHealth,
  "apps/DaemonSet": daemonSetHealth,
  "extensions/DaemonSet": daemonSetHealth,
  "apps/Deployment": deploymentHealth,
  "extensions/Deployment": deploymentHealth,
  "apps/ReplicaSet": replicaSetHealth,
  "extensions/ReplicaSet": replicaSetHealth,
  "policy/PodDisruptionBudget": () => result(HealthStatus.Current, "AllowedDisruptions has been computed."),
  "batch/CronJob": alwaysReady,
  "batch/Job": jobHealth,
  "apiextensions.k8s.io/CustomResourceDefinition": crdHealth,
};

function deploymentHealth({ object, conditions }: Subject): Health {
  // Without progressDeadlineSeconds the controller never sets Progressing, so it cannot be waited for.
  let progressing = int(object, ["spec", "progressDeadlineSeconds"], maxInt32) === maxInt32;
  let available = false;
  for (const c of conditions) {
    if (c.type === "Progressing") {
      if (c.reason === "ProgressDeadlineExceeded") {
        return { ...failed(c.reason, c.message, c), message: "Progress deadline exceeded" };
      }
      if (c.status === "True" && c.reason === "NewReplicaSetAvailable") progressing = true;
    }
    if (c.type === "Available" && c.status === "True") available = true;
  }
  const spec = int(object, ["spec", "replicas"], 1);
  const replicas = int(object, ["status", "replicas"], 0);
  const updated = int(object, ["status", "updatedReplicas"], 0);
  const ready = int(object, ["status", "readyReplicas"], 0);
  const availableReplicas = int(object, ["status", "availableReplicas"], 0);
  if (spec > replicas) return inProgress("LessReplicas", `Replicas: ${replicas}/${spec}`);
  if (spec > updated) return inProgress("LessUpdated", `Updated: ${updated}/${spec}`);
  if (replicas > spec) return inProgress("ExtraPods", `Pending termination: ${replicas - spec}`);
  if (updated > availableReplicas) return inProgress("LessAvailable", `Available: ${availableReplicas}/${updated}`);
  if (spec > ready) return inProgress("LessReady", `Ready: ${ready}/${spec}`);
  if (!progressing) return inProgress("ReplicaSetNotAvailable", "ReplicaSet not Available");
  if (!available) return inProgress("DeploymentNotAvailable", "Deployment not Available");
  return result(HealthStatus.Current, `Deployment is available. Replicas: ${replicas}`);
}

// The StatefulSet controller sets no conditions: only the counts and revisions say how it is doing.
function statefulSetHealth({ object }: Subject): Health {
  if (str(object, ["spec", "updateStrategy", "type"], "") === "OnDelete") {
    return result(HealthStatus.Current, "StatefulSet is using the ondelete update strategy");
  }
  const spec = int(object, ["spec", "replicas"], 1);
  const ready = int(object, ["status", "readyReplicas"], 0);
  const current = int(object, ["status", "currentReplicas"], 0);
  const updated = int(object, ["status", "updatedReplicas"], 0);
  const replicas = int(object, ["status", "replicas"], 0);
  const partition = int(object, ["spec", "updateStrategy", "rollingUpdate", "partition"], -1);
  if (spec > replicas) return inProgress("LessReplicas", `Replicas: ${replicas}/${spec}`);
  if (spec > ready) return inProgress("LessReady", `Ready: ${ready}/${spec}`);
  if (replicas > spec) return inProgress("ExtraPods", `Pending termination: ${replicas - spec}`);
  if (partition !== -1) {
    if (updated < spec - partition) return inProgress("PartitionRollout", `updated: ${updated}/${spec - partition}`);
    return result(HealthStatus.Current, `Partition rollout complete. updated: ${updated}`);
  }
  if (spec > current) return inProgress("LessCurrent", `current: ${current}/${spec}`);
  if (str(object, ["status", "currentRevision"], "") !== str(object, ["status", "updateRevision"], "")) {
    return inProgress("RevisionMismatch", "Waiting for updated revision to match current");
  }
  return result(HealthStatus.Current, `All replicas scheduled as expected. Replicas: ${replicas}`);
}

function daemonSetHealth({ object, kind }: Subject): Health {
  // Unlike the generic check, a DaemonSet the controller has acted on always has both generations.
  if (typeof field(object, "metadata", "generation") !== "number") {
    return inProgress("NoGeneration", `${kind} metadata.generation not found`);
  }
  if (typeof field(object, "status", "observedGeneration") !== "number") {
    return inProgress("NoObservedGeneration", `${kind} status.observedGeneration not found`);
  }
  const desired = int(object, ["status", "desiredNumberScheduled"], -1);
  const current = int(object, ["status", "currentNumberScheduled"], 0);
  const updated = int(object, ["status", "updatedNumberScheduled"], 0);
  const available = int(object, ["status", "numberAvailable"], 0);
  const ready = int(object, ["status", "numberReady"], 0);
  if (desired === -1) return inProgress("NoDesiredNumber", "Missing .status.desiredNumberScheduled");
  if (desired > current) return inProgress("LessCurrent", `Current: ${current}/${desired}`);
  if (desired > updated) return inProgress("LessUpdated", `Updated: ${updated}/${desired}`);
  if (desired > available) return inProgress("LessAvailable", `Available: ${available}/${desired}`);
  if (desired > ready) return inProgress("LessReady", `Ready: ${ready}/${desired}`);
  return result(HealthStatus.Current, `All replicas scheduled as expected. Replicas: ${desired}`);
}

function replicaSetHealth({ object, conditions }: Subject): Health {
  if (conditions.some((c) => c.type === "ReplicaFailure" && c.status === "True")) {
    return inProgress("ReplicaFailure", "Replica Failure condition. Check Pods");
  }
  const spec = int(object, ["spec", "replicas"], 1);
  const replicas = int(object, ["status", "replicas"], 0);
  const ready = int(object, ["status", "readyReplicas"], 0);
  const available = int(object, ["status", "availableReplicas"], 0);
  const labelled = int(object, ["status", "fullyLabeledReplicas"], 0);
  if (spec > labelled) return inProgress("LessLabelled", `Labelled: ${labelled}/${spec}`);
  if (spec > available) return inProgress("LessAvailable", `Available: ${available}/${spec}`);
  if (spec > ready) return inProgress("LessReady", `Ready: ${ready}/${spec}`);
  if (replicas > spec) return inProgress("ExtraPods", `Pending termination: ${replicas - spec}`);
  return result(HealthStatus.Current, `ReplicaSet is available. Replicas: ${replicas}`);
}

/** How long a Pod may stay unscheduled before kstatus calls it Failed. */
const scheduleWindowMs = 15_000;

function podHealth({ object, conditions, now }: Subject): Health {
  const phase = str(object, ["status", "phase"], "");
  switch (phase) {
    case "Succeeded":
      return result(HealthStatus.Current, "Pod has completed successfully");
    case "Failed":
      // A Pod that ran to an unsuccessful end is done, not waiting on anything.
      return result(HealthStatus.Current, "Pod has completed, but not successfully");
    case "Running": {
      if (conditions.some((c) => c.type === "Ready" && c.status === "True")) {
        return result(HealthStatus.Current, "Pod is Ready");
      }
      const crashLooping = crashLoopingContainers(object);
      if (crashLooping.length > 0) {
        return failed("ContainerCrashLooping", `Containers in CrashLoop state: ${crashLooping.join(",")}`);
      }
      return inProgress("PodRunningNotReady", "Pod is running but is not Ready");
    }
    case "Pending": {
      const unschedulable = conditions.some(
        (c) => c.type === "PodScheduled" && c.status === "False" && c.reason === "Unschedulable",
      );
      if (!unschedulable) return inProgress("PodPending", "Pod is in the Pending phase");
      const created = Date.parse(str(object, ["metadata", "creationTimestamp"], ""));
      if (now - scheduleWindowMs < created) return inProgress("PodNotScheduled", "Pod has not been scheduled");
      return failed("PodUnschedulable", "Pod could not be scheduled");
    }
    case "":
      return inProgress("PodNotObserved", "Pod phase not available");
    default:
      return result(HealthStatus.Unknown, `unknown phase ${phase}`);
  }
}

function crashLoopingContainers(object: JsonObject): string[] {
  const statuses = field(object, "status", "containerStatuses");
  if (!Array.isArray(statuses)) return [];
  return statuses.flatMap((s: unknown) => {
    const container = asObject(s);
    const name = container?.["name"];
    const reason = container === undefined ? undefined : field(container, "state", "waiting", "reason");
    return typeof name === "string" && reason === "CrashLoopBackOff" ? [name] : [];
  });
}

function pvcHealth({ object }: Subject): Health {
  const phase = str(object, ["status", "phase"], "unknown");
  if (phase !== "Bound") return inProgress("NotBound", `PVC is not Bound. phase: ${phase}`);
  return result(HealthStatus.Current, "PVC is Bound");
}

// Current once started (and while running): a Job is waited for to start, not to complete.
function jobHealth({ object, conditions }: Subject): Health {
  const parallelism = int(object, ["spec", "parallelism"], 1);
  const completions = int(object, ["spec", "completions"], parallelism);
  const succeeded = int(object, ["status", "succeeded"], 0);
  const active = int(object, ["status", "active"], 0);
  const failures = int(object, ["status", "failed"], 0);
  for (const c of conditions) {
    if (c.type === "Complete" && c.status === "True") {
      return result(HealthStatus.Current, `Job Completed. succeeded: ${succeeded}/${completions}`);
    }
    if (c.type === "Failed" && c.status === "True") {
      return failed("JobFailed", `Job Failed. failed: ${failures}/${completions}`, c);
    }
  }
  if (str(object, ["status", "startTime"], "") === "") return inProgress("JobNotStarted", "Job not started");
  return result(HealthStatus.Current, `Job in progress. success:${succeeded}, active: ${active}, failed: ${failures}`);
}

function serviceHealth({ object }: Subject): Health {
  const type = str(object, ["spec", "type"], "ClusterIP");
  if (type === "LoadBalancer" && str(object, ["spec", "clusterIP"], "") === "") {
    return inProgress("NoIPAssigned", "ClusterIP not set. Service type: LoadBalancer");
  }
  return result(HealthStatus.Current, "Service is ready");
}

function crdHealth({ conditions }: Subject): Health {
  for (const c of conditions) {
    if (c.type === "NamesAccepted" && c.status === "False") return failed(c.reason, c.message, c);
    if (c.type === "Established") {
      if (c.status === "False" && c.reason !== "Installing") return failed(c.reason, c.message, c);
      if (c.status === "True") return result(HealthStatus.Current, "CRD is established");
    }
  }
  return inProgress("Installing", "Install in progress");
}

const maxInt32 = 2 ** 31 - 1;

/** An integer field, or the fallback when it is missing or not an integer (as kstatus reads it). */
function int(object: JsonObject, path: readonly string[], fallback: number): number {
  const value = field(object, ...path);
  return typeof value === "number" && Number.isInteger(value) ? value : fallback;
}

function str(object: JsonObject, path: readonly string[], fallback: string): string {
  const value = field(object, ...path);
  return typeof value === "string" ? value : fallback;
}

/**
 * status.conditions with absent fields as "", or undefined when they are not conditions at all
 * (kstatus cannot decode them, and the object's status is then Unknown).
 */
function readConditions(live: JsonObject): ObjectCondition[] | undefined {
  const status = live["status"];
  if (status === undefined || status === null) return [];
  const statusObject = asObject(status);
  if (statusObject === undefined) return undefined;
  const conditions = statusObject["conditions"];
  if (conditions === undefined || conditions === null) return [];
  if (!Array.isArray(conditions)) return undefined;
  const read: ObjectCondition[] = [];
  for (const entry of conditions as unknown[]) {
    const c = entry === null ? {} : asObject(entry);
    if (c === undefined) return undefined;
    const text = (key: string): string | undefined => {
      const value = c[key];
      return value === undefined || value === null ? "" : typeof value === "string" ? value : undefined;
    };
    const [type, status, reason, message] = ["type", "status", "reason", "message"].map(text);
    if (type === undefined || status === undefined || reason === undefined || message === undefined) return undefined;
    const since = c["lastTransitionTime"];
    read.push({ type, status, reason, message, ...(typeof since === "string" ? { lastTransitionTime: since } : {}) });
  }
  return read;
}
