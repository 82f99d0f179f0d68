import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { JsonObject } from "./desired.ts";
import { computeHealth, computeStatus, HealthStatus } from "./kstatus.ts";

const { Current, InProgress, Failed, Terminating, NotFound, Unknown } = HealthStatus;

/** A live object of `apiVersion`/`kind` with the given spec and status (generation 1, observed unless said). */
function live(apiVersion: string, kind: string, spec: JsonObject, status: JsonObject): JsonObject {
  return { apiVersion, kind, metadata: { name: "x", generation: 1 }, spec, status };
}

const condition = (type: string, status: string, reason = "", message = ""): JsonObject => ({
  type,
  status,
  reason,
  message,
});

void describe("kstatus: the generic rules", () => {
  test("NotFound, Terminating, and Current for an object with nothing to say", () => {
    assert.equal(computeHealth(undefined), NotFound);
    assert.equal(
      computeHealth({ kind: "ConfigMap", metadata: { deletionTimestamp: "2026-01-01T00:00:00Z" } }),
      Terminating,
    );
    assert.equal(computeHealth({ kind: "Widget", metadata: {} }), Current);
  });
  test("an observedGeneration other than the generation is InProgress, newer as well as older", () => {
    const widget = (observed: number): JsonObject => ({
      apiVersion: "x.dev/v1",
      kind: "Widget",
      metadata: { generation: 2 },
      status: { observedGeneration: observed },
    });
    assert.equal(computeHealth(widget(1)), InProgress);
    assert.equal(computeHealth(widget(3)), InProgress);
    assert.deepEqual(computeStatus(widget(3)).conditions, [
      {
        type: "Reconciling",
        status: "True",
        reason: "LatestGenerationNotObserved",
        message: "Widget generation is 2, but latest observed generation is 3",
      },
    ]);
    assert.equal(computeHealth(widget(2)), Current);
  });
  test("Reconciling=True is InProgress and Stalled=True is Failed with that condition, whatever the kind", () => {
    const stalled = live("apps/v1", "Deployment", {}, { conditions: [condition("Stalled", "True", "Broken", "no")] });
    assert.deepEqual(computeStatus(stalled), {
      status: Failed,
      message: "no",
      conditions: [{ type: "Stalled", status: "True", reason: "Broken", message: "no" }],
    });
    const reconciling = live("x.dev/v1", "Widget", {}, { conditions: [condition("Reconciling", "True")] });
    assert.equal(computeHealth(reconciling), InProgress);
  });
  test("a kind without rules follows its Ready condition, and is Current without one", () => {
    const ready = (status: string): JsonObject =>
      live("x.dev/v1", "Widget", {}, { conditions: [condition("Ready", status)] });
    assert.equal(computeHealth(ready("True")), Current);
    assert.equal(computeHealth(ready("False")), InProgress);
    assert.equal(computeHealth(ready("Unknown")), InProgress);
    assert.equal(computeHealth(live("x.dev/v1", "Widget", {}, {})), Current);
  });
  test("a generation or deletion field of the wrong type (a custom resource's status may hold one) is Unknown", () => {
    const widget = (metadata: JsonObject, status: JsonObject): JsonObject => ({
      apiVersion: "x.dev/v1",
      kind: "Widget",
      metadata: { name: "w", ...metadata },
      status,
    });
    assert.equal(computeHealth(widget({ generation: 2 }, { observedGeneration: "2" })), Unknown);
    assert.equal(computeHealth(widget({ generation: 2 }, { observedGeneration: null })), Unknown);
    assert.equal(computeHealth(widget({ generation: 2 }, { observedGeneration: 2.5 })), Unknown);
    assert.equal(computeHealth(widget({ generation: "2" }, {})), Unknown);
    assert.equal(computeHealth(widget({ generation: 2, deletionTimestamp: null }, {})), Unknown);
    const daemonSet = { ...live("apps/v1", "DaemonSet", {}, { observedGeneration: "1", desiredNumberScheduled: 0 }) };
    assert.equal(computeHealth(daemonSet), Unknown);
    // Without a generation kstatus never reads observedGeneration; an empty deletionTimestamp is no deletion.
    assert.equal(computeHealth(widget({}, { observedGeneration: "x" })), Current);
    assert.equal(computeHealth(widget({ generation: 2, deletionTimestamp: "" }, { observedGeneration: 2 })), Current);
  });
  test("conditions kstatus cannot decode make the status Unknown", () => {
    assert.equal(computeHealth(live("x.dev/v1", "Widget", {}, { conditions: "Ready" })), Unknown);
    assert.equal(computeHealth(live("x.dev/v1", "Widget", {}, { conditions: [{ type: 1 }] })), Unknown);
  });
  test("the kind rules are keyed by group: a custom Deployment is not an apps Deployment", () => {
    assert.equal(computeHealth(live("x.dev/v1", "Deployment", { replicas: 3 }, {})), Current);
    assert.equal(computeHealth(live("apps/v1", "Deployment", { replicas: 3 }, {})), InProgress);
  });
});

void describe("kstatus: Deployment", () => {
  const available = {
    observedGeneration: 1,
    replicas: 2,
    updatedReplicas: 2,
    readyReplicas: 2,
    availableReplicas: 2,
    conditions: [
      condition("Available", "True", "MinimumReplicasAvailable"),
      condition("Progressing", "True", "NewReplicaSetAvailable"),
    ],
  };
  const deployment = (status: JsonObject, spec: JsonObject = {}): JsonObject =>
    live("apps/v1", "Deployment", { replicas: 2, progressDeadlineSeconds: 600, ...spec }, status);

  test("Current once every replica is updated, available and ready, and the rollout is complete", () => {
    assert.equal(computeHealth(deployment(available)), Current);
    assert.equal(computeHealth(deployment({ ...available, readyReplicas: 1 })), InProgress);
    assert.equal(computeHealth(deployment({ ...available, availableReplicas: 1 })), InProgress);
    assert.equal(computeHealth(deployment({ ...available, replicas: 3 })), InProgress, "pods pending termination");
    assert.equal(computeHealth(deployment({ observedGeneration: 1 })), InProgress);
  });
  test("with a progress deadline, only Progressing=NewReplicaSetAvailable says the rollout is done", () => {
    const conditions = [condition("Available", "True"), condition("Progressing", "True", "ReplicaSetUpdated")];
    assert.equal(computeHealth(deployment({ ...available, conditions })), InProgress);
    // Without a deadline (math.MaxInt32, the controller's "none") Progressing is never set.
    const noDeadline = deployment(
      { ...available, conditions: [condition("Available", "True")] },
      {
        progressDeadlineSeconds: 2 ** 31 - 1,
      },
    );
    assert.equal(computeHealth(noDeadline), Current);
  });
  test("a Deployment past its progress deadline is Failed, with a Stalled condition from Progressing", () => {
    const exceeded = deployment({
      observedGeneration: 1,
      replicas: 2,
      conditions: [
        {
          ...condition(
            "Progressing",
            "False",
            "ProgressDeadlineExceeded",
            'ReplicaSet "x-1" has timed out progressing.',
          ),
          lastTransitionTime: "2026-01-01T00:00:00Z",
        },
      ],
    });
    assert.deepEqual(computeStatus(exceeded), {
      status: Failed,
      message: "Progress deadline exceeded",
      conditions: [
        {
          type: "Stalled",
          status: "True",
          reason: "ProgressDeadlineExceeded",
          message: 'ReplicaSet "x-1" has timed out progressing.',
          lastTransitionTime: "2026-01-01T00:00:00Z",
        },
      ],
    });
  });
});

void describe("kstatus: StatefulSet, DaemonSet, ReplicaSet", () => {
  test("a StatefulSet is Current when its replicas are ready and current and its revisions agree", () => {
    const status = {
      observedGeneration: 1,
      replicas: 2,
      readyReplicas: 2,
      currentReplicas: 2,
      updatedReplicas: 2,
      currentRevision: "a",
      updateRevision: "a",
    };
    const sts = (s: JsonObject, spec: JsonObject = {}): JsonObject =>
      live("apps/v1", "StatefulSet", { replicas: 2, ...spec }, s);
    assert.equal(computeHealth(sts(status)), Current);
    assert.equal(computeHealth(sts({ ...status, updateRevision: "b" })), InProgress);
    assert.equal(computeHealth(sts({ ...status, readyReplicas: 1 })), InProgress);
    assert.equal(computeHealth(sts({}, { updateStrategy: { type: "OnDelete" } })), Current);
    const partitioned = { updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 1 } } };
    assert.equal(computeHealth(sts({ ...status, updatedReplicas: 0, updateRevision: "b" }, partitioned)), InProgress);
    assert.equal(computeHealth(sts({ ...status, updatedReplicas: 1, updateRevision: "b" }, partitioned)), Current);
  });
  test("a DaemonSet is InProgress until every scheduled pod is current, updated, available and ready", () => {
    const ds = (status: JsonObject): JsonObject => live("apps/v1", "DaemonSet", {}, status);
    const counts = { desiredNumberScheduled: 1, currentNumberScheduled: 1, updatedNumberScheduled: 1 };
    assert.equal(
      computeHealth(ds({ observedGeneration: 1, ...counts, numberAvailable: 0, numberReady: 0 })),
      InProgress,
    );
    assert.equal(computeHealth(ds({ observedGeneration: 1, ...counts, numberAvailable: 1, numberReady: 1 })), Current);
    // Before its controller has seen it, it is not yet anything.
    assert.equal(computeHealth(ds({})), InProgress);
    assert.equal(computeHealth(ds({ observedGeneration: 1 })), InProgress);
  });
  test("a ReplicaSet with ReplicaFailure, or too few labelled, available or ready pods, is InProgress", () => {
    const status = { replicas: 1, fullyLabeledReplicas: 1, availableReplicas: 1, readyReplicas: 1 };
    const rs = (s: JsonObject): JsonObject => live("apps/v1", "ReplicaSet", { replicas: 1 }, s);
    assert.equal(computeHealth(rs(status)), Current);
    assert.equal(computeHealth(rs({ ...status, fullyLabeledReplicas: 0 })), InProgress);
    assert.equal(computeHealth(rs({ ...status, conditions: [condition("ReplicaFailure", "True")] })), InProgress);
  });
});

void describe("kstatus: Pod, PVC, Service, Job, PodDisruptionBudget, CRD", () => {
  const pod = (status: JsonObject, created = "2026-01-01T00:00:00Z"): JsonObject => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p", creationTimestamp: created },
    status,
  });
  test("a Pod is Current when Ready or finished, even unsuccessfully; running but not Ready is InProgress", () => {
    assert.equal(computeHealth(pod({ phase: "Running", conditions: [condition("Ready", "True")] })), Current);
    assert.equal(computeHealth(pod({ phase: "Running", conditions: [condition("Ready", "False")] })), InProgress);
    assert.equal(computeHealth(pod({ phase: "Succeeded" })), Current);
    assert.equal(computeHealth(pod({ phase: "Failed" })), Current);
    assert.equal(computeHealth(pod({})), InProgress);
    assert.equal(computeHealth(pod({ phase: "Lost" })), Unknown);
  });
  test("a crash-looping Pod is Failed, and so is one left unschedulable past the schedule window", () => {
    const crashing = pod({
      phase: "Running",
      containerStatuses: [{ name: "app", state: { waiting: { reason: "CrashLoopBackOff" } } }],
    });
    assert.equal(computeStatus(crashing).message, "Containers in CrashLoop state: app");
    assert.equal(computeHealth(crashing), Failed);
    const unschedulable = pod({ phase: "Pending", conditions: [condition("PodScheduled", "False", "Unschedulable")] });
    const created = Date.parse("2026-01-01T00:00:00Z");
    assert.equal(computeStatus(unschedulable, created + 10_000).status, InProgress);
    assert.equal(computeStatus(unschedulable, created + 20_000).status, Failed);
    assert.equal(computeHealth(pod({ phase: "Pending" })), InProgress);
  });
  test("a PVC is Current once Bound", () => {
    assert.equal(computeHealth(live("v1", "PersistentVolumeClaim", {}, { phase: "Pending" })), InProgress);
    assert.equal(computeHealth(live("v1", "PersistentVolumeClaim", {}, { phase: "Bound" })), Current);
  });
  test("a Service is Current unless a LoadBalancer without a cluster IP", () => {
    assert.equal(computeHealth(live("v1", "Service", { type: "LoadBalancer" }, {})), InProgress);
    assert.equal(computeHealth(live("v1", "Service", { type: "LoadBalancer", clusterIP: "10.0.0.1" }, {})), Current);
    assert.equal(computeHealth(live("v1", "Service", {}, {})), Current);
  });
  test("a Job is InProgress until started, Current while running or complete, Failed once Failed", () => {
    const job = (status: JsonObject): JsonObject => live("batch/v1", "Job", { completions: 1 }, status);
    assert.equal(computeHealth(job({})), InProgress);
    assert.equal(computeHealth(job({ startTime: "2026-01-01T00:00:00Z", active: 1 })), Current);
    assert.equal(computeHealth(job({ conditions: [condition("Complete", "True")] })), Current);
    assert.deepEqual(computeStatus(job({ failed: 1, conditions: [condition("Failed", "True")] })).conditions, [
      { type: "Stalled", status: "True", reason: "JobFailed", message: "Job Failed. failed: 1/1" },
    ]);
  });
  test("a PodDisruptionBudget its controller observed is Current", () => {
    assert.equal(computeHealth(live("policy/v1", "PodDisruptionBudget", {}, { observedGeneration: 1 })), Current);
    assert.equal(computeHealth(live("policy/v1", "PodDisruptionBudget", {}, { observedGeneration: 0 })), InProgress);
  });
  test("a CRD is Current once Established, Failed when its names are refused", () => {
    const crd = (...conditions: JsonObject[]): JsonObject =>
      live("apiextensions.k8s.io/v1", "CustomResourceDefinition", {}, { conditions });
    assert.equal(computeHealth(crd(condition("Established", "False", "Installing"))), InProgress);
    assert.equal(computeHealth(crd(condition("Established", "True"))), Current);
    assert.equal(computeHealth(crd(condition("NamesAccepted", "False", "MultipleNamesNotAllowed", "x"))), Failed);
    assert.equal(computeHealth(crd()), InProgress);
  });
});
