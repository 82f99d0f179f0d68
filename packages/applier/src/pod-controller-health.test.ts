import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeObject, ListOptions, ObjectList, ResourceMapping } from "@driftless/kube";
import { computeStatus } from "./kstatus.ts";
import { selectorQuery, WaitHealth, withPods } from "./pod-controller-health.ts";

const apps = (kind: string, resource: string): ResourceMapping => ({
  group: "apps",
  version: "v1",
  kind,
  resource,
  namespaced: true,
  verbs: ["get", "list"],
});

/** A controller that is InProgress by its own status (no Pod ready yet). */
function controller(kind: string): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind,
    metadata: { name: "web", namespace: "shop", generation: 1 },
    spec: { replicas: 1, selector: { matchLabels: { app: "web" } } },
    status: { observedGeneration: 1, replicas: 1, fullyLabeledReplicas: 1 },
  } as KubeObject;
}

function crashLoopingPod(): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web-1", namespace: "shop", labels: { app: "web" } },
    status: {
      phase: "Running",
      containerStatuses: [{ name: "web", state: { waiting: { reason: "CrashLoopBackOff" } } }],
    },
  } as KubeObject;
}

function reader(live: KubeObject, pods: KubeObject[] | Error): { health: WaitHealth; lists: ListOptions[] } {
  const lists: ListOptions[] = [];
  const client = {
    list: (_m: ResourceMapping, opts: ListOptions = {}): Promise<ObjectList> => {
      lists.push(opts);
      return pods instanceof Error ? Promise.reject(pods) : Promise.resolve({ items: pods, resourceVersion: "1" });
    },
  };
  return { health: new WaitHealth({ get: () => Promise.resolve(live) }, client), lists };
}

void describe("WaitHealth", () => {
  it("reads a ReplicaSet or StatefulSet with a crash-looping Pod as Failed, as cli-utils' pod-controller reader does", async () => {
    for (const [kind, resource] of [
      ["ReplicaSet", "replicasets"],
      ["StatefulSet", "statefulsets"],
    ] as const) {
      const { health, lists } = reader(controller(kind), [crashLoopingPod()]);
      assert.deepEqual(await health.read(apps(kind, resource), "shop", "web"), {
        object: "InProgress",
        wait: "Failed",
      });
      assert.deepEqual(lists, [{ namespace: "shop", labelSelector: "app=web", resourceVersion: "0" }]);
    }
  });

  it("reads a Deployment alone: cli-utils does not fail it for its Pods", async () => {
    const deployment = { ...controller("Deployment"), status: { observedGeneration: 1, replicas: 1 } } as KubeObject;
    const { health, lists } = reader(deployment, [crashLoopingPod()]);
    assert.equal((await health.read(apps("Deployment", "deployments"), "shop", "web")).wait, "InProgress");
    assert.equal(lists.length, 0);
  });

  it("keeps a controller's own status when its Pods cannot be listed", async () => {
    const { health } = reader(controller("ReplicaSet"), new Error("forbidden"));
    assert.equal((await health.read(apps("ReplicaSet", "replicasets"), "shop", "web")).wait, "InProgress");
  });

  it("lists a controller's Pods once every 5 s however often the wait polls it", async () => {
    const { health, lists } = reader(controller("ReplicaSet"), []);
    for (let i = 0; i < 3; i++) await health.read(apps("ReplicaSet", "replicasets"), "shop", "web");
    assert.equal(lists.length, 1);
  });
});

void describe("withPods", () => {
  const own = computeStatus(controller("ReplicaSet"));

  it("fails an InProgress controller with a Pod unschedulable for 15 s, not one unschedulable for less", () => {
    const created = Date.parse("2026-01-01T00:00:00Z");
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p", creationTimestamp: "2026-01-01T00:00:00Z" },
      status: { phase: "Pending", conditions: [{ type: "PodScheduled", status: "False", reason: "Unschedulable" }] },
    };
    assert.equal(withPods(own, [pod], created + 10_000).status, "InProgress");
    const failed = withPods(own, [pod], created + 16_000);
    assert.deepEqual([failed.status, failed.message], ["Failed", "1 pods have failed"]);
  });

  it("leaves a Current controller Current, and ignores Pods that ended (phase Failed is Current to kstatus)", () => {
    const current = computeStatus({
      ...controller("ReplicaSet"),
      status: { observedGeneration: 1, replicas: 1, fullyLabeledReplicas: 1, readyReplicas: 1, availableReplicas: 1 },
    });
    assert.equal(withPods(current, [crashLoopingPod()]).status, "Current");
    const ended = { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, status: { phase: "Failed" } };
    assert.equal(withPods(own, [ended]).status, "InProgress");
  });
});

void describe("selectorQuery", () => {
  it("writes a label selector as the API server reads it", () => {
    assert.equal(
      selectorQuery({
        matchLabels: { app: "web" },
        matchExpressions: [
          { key: "tier", operator: "In", values: ["b", "a"] },
          { key: "env", operator: "NotIn", values: ["dev"] },
          { key: "canary", operator: "Exists" },
          { key: "legacy", operator: "DoesNotExist" },
        ],
      }),
      "app=web,tier in (a,b),env notin (dev),canary,!legacy",
    );
    assert.equal(selectorQuery({}), "");
  });

  it("reads nothing it cannot read: no selector, an unknown operator, In without values", () => {
    assert.equal(selectorQuery(undefined), undefined);
    assert.equal(selectorQuery({ matchExpressions: [{ key: "a", operator: "Near" }] }), undefined);
    assert.equal(selectorQuery({ matchExpressions: [{ key: "a", operator: "In", values: [] }] }), undefined);
  });
});
