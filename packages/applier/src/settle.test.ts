import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeObject, ResourceMapping } from "@driftless/kube";
import { Operation, type ApplyOutcome } from "./apply-outcome.ts";
import { toDesired } from "./desired.ts";
import { settleApplied } from "./settle.ts";

const deployments: ResourceMapping = {
  group: "apps",
  version: "v1",
  kind: "Deployment",
  resource: "deployments",
  namespaced: true,
  verbs: ["get"],
};

function deployment(name: string, state: boolean | "deadline exceeded"): KubeObject {
  const available = [{ type: "Available", status: "True", reason: "MinimumReplicasAvailable" }];
  const exceeded = [{ type: "Progressing", status: "False", reason: "ProgressDeadlineExceeded" }];
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: "ns", generation: 1 },
    spec: { replicas: 1 },
    status:
      state === true
        ? {
            observedGeneration: 1,
            replicas: 1,
            readyReplicas: 1,
            availableReplicas: 1,
            updatedReplicas: 1,
            conditions: available,
          }
        : {
            observedGeneration: 1,
            replicas: 1,
            updatedReplicas: 0,
            ...(state === false ? {} : { conditions: exceeded }),
          },
  } as KubeObject;
}

function outcome(name: string, operation: Operation): ApplyOutcome {
  return {
    desired: toDesired({
      id: { group: "apps", kind: "Deployment", namespace: "ns", name },
      apiVersion: "apps/v1",
      raw: deployment(name, false) as never,
      sourcePath: `${name}.yaml`,
      sourceHash: "0",
      dependsOn: [],
    }),
    operation,
    health: "InProgress",
    mapping: deployments,
  };
}

void describe("settleApplied", () => {
  void it("waits until what the pass wrote is Current and reports the last health", async () => {
    let reads = 0;
    const live = {
      get: (_m: ResourceMapping, _ns: string | undefined, name: string) =>
        Promise.resolve(deployment(name, ++reads >= 3)),
    };
    const settled = await settleApplied([outcome("web", Operation.Updated)], { live, timeoutMs: 5_000, pollMs: 1 });
    assert.equal(settled.timedOut.length, 0);
    assert.equal(settled.outcomes[0]?.health, "Current");
    assert.ok(reads >= 3);
  });

  void it("stops waiting for an object once it is Failed (a Deployment past its progress deadline): no timeout", async () => {
    let reads = 0;
    const live = {
      get: (_m: ResourceMapping, _ns: string | undefined, name: string) =>
        Promise.resolve(deployment(name, ++reads >= 2 ? "deadline exceeded" : false)),
    };
    const started = Date.now();
    const settled = await settleApplied([outcome("web", Operation.Created)], { live, timeoutMs: 2_000, pollMs: 1 });
    assert.ok(Date.now() - started < 1_000, "waited for a Failed object as if it could still become Current");
    assert.deepEqual(settled.timedOut, []);
    assert.equal(settled.outcomes[0]?.health, "Failed");
  });

  void it("gives up at the timeout and names what never became Current; unchanged objects are not waited for", async () => {
    const asked: string[] = [];
    const live = {
      get: (_m: ResourceMapping, _ns: string | undefined, name: string) => {
        asked.push(name);
        return Promise.resolve(deployment(name, false));
      },
    };
    const started = Date.now();
    const settled = await settleApplied([outcome("stuck", Operation.Created), outcome("old", Operation.Unchanged)], {
      live,
      timeoutMs: 50,
      pollMs: 5,
    });
    assert.ok(Date.now() - started >= 45);
    assert.deepEqual(
      settled.timedOut.map((o) => o.desired.id.name),
      ["stuck"],
    );
    assert.ok(!asked.includes("old"), "an unchanged object was waited for");
  });

  void it("waits for unchanged objects too when told (a reconciler's first wait), naming them when they time out", async () => {
    const live = {
      get: (_m: ResourceMapping, _ns: string | undefined, name: string) => Promise.resolve(deployment(name, false)),
    };
    const settled = await settleApplied([outcome("old", Operation.Unchanged)], {
      live,
      timeoutMs: 20,
      pollMs: 5,
      unchanged: true,
    });
    assert.deepEqual(
      settled.timedOut.map((o) => o.desired.id.name),
      ["old"],
    );
  });

  void it("reports no timeout when it is stopped (shutdown) before the timeout", async () => {
    const stop = new AbortController();
    const live = {
      get: (_m: ResourceMapping, _ns: string | undefined, name: string) => {
        stop.abort();
        return Promise.resolve(deployment(name, false));
      },
    };
    const settled = await settleApplied([outcome("web", Operation.Updated)], {
      live,
      timeoutMs: 60_000,
      pollMs: 1,
      signal: stop.signal,
    });
    assert.deepEqual(settled.timedOut, []);
  });
});

void describe("settleApplied with a ReplicaSet", () => {
  it("ends at once for a ReplicaSet with a crash-looping Pod (cli-utils' wait reads it Failed), the outcome keeping the ReplicaSet's own kstatus", async () => {
    const replicaSets: ResourceMapping = { ...deployments, kind: "ReplicaSet", resource: "replicasets" };
    const live = {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: { name: "web", namespace: "ns", generation: 1 },
      spec: { replicas: 1, selector: { matchLabels: { app: "web" } } },
      status: { observedGeneration: 1, replicas: 1, fullyLabeledReplicas: 1 },
    } as KubeObject;
    const crashLooping = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web-1", namespace: "ns", labels: { app: "web" } },
      status: {
        phase: "Running",
        containerStatuses: [{ name: "w", state: { waiting: { reason: "CrashLoopBackOff" } } }],
      },
    } as KubeObject;
    const written: ApplyOutcome = {
      ...outcome("web", Operation.Created),
      desired: {
        ...outcome("web", Operation.Created).desired,
        id: { group: "apps", kind: "ReplicaSet", namespace: "ns", name: "web" },
      },
      mapping: replicaSets,
    };
    const started = Date.now();
    const settled = await settleApplied([written], {
      live: { get: () => Promise.resolve(live) },
      pods: { list: () => Promise.resolve({ items: [crashLooping], resourceVersion: "1" }) },
      timeoutMs: 10_000,
      pollMs: 1,
    });
    assert.ok(Date.now() - started < 5_000, "the wait ran towards its timeout");
    assert.deepEqual(settled.timedOut, []);
    assert.equal(settled.outcomes[0]?.health, "InProgress");
  });
});
