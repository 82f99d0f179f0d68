import { test } from "node:test";
import assert from "node:assert/strict";
import { computeHealth, HealthStatus } from "./kstatus.ts";

test("reports NotFound, Terminating and Current for the simple cases", () => {
  assert.equal(computeHealth(undefined), HealthStatus.NotFound);
  assert.equal(
    computeHealth({ kind: "ConfigMap", metadata: { deletionTimestamp: "2026-01-01T00:00:00Z" } }),
    HealthStatus.Terminating,
  );
  assert.equal(computeHealth({ kind: "ConfigMap", metadata: {} }), HealthStatus.Current);
});

test("a Deployment is InProgress until its controller observed the generation and replicas are ready", () => {
  const base = { kind: "Deployment", metadata: { generation: 2 }, spec: { replicas: 2 } };
  assert.equal(computeHealth({ ...base, status: {} }), HealthStatus.InProgress);
  assert.equal(
    computeHealth({ ...base, status: { observedGeneration: 1, readyReplicas: 2, updatedReplicas: 2 } }),
    HealthStatus.InProgress,
  );
  assert.equal(
    computeHealth({ ...base, status: { observedGeneration: 2, readyReplicas: 1, updatedReplicas: 2 } }),
    HealthStatus.InProgress,
  );
  assert.equal(
    computeHealth({ ...base, status: { observedGeneration: 2, readyReplicas: 2, updatedReplicas: 2 } }),
    HealthStatus.Current,
  );
});

test("a CRD is Current only once Established, and Stalled=True means Failed", () => {
  assert.equal(
    computeHealth({
      kind: "CustomResourceDefinition",
      metadata: {},
      status: { conditions: [{ type: "Established", status: "False" }] },
    }),
    HealthStatus.InProgress,
  );
  assert.equal(
    computeHealth({
      kind: "CustomResourceDefinition",
      metadata: {},
      status: { conditions: [{ type: "Established", status: "True" }] },
    }),
    HealthStatus.Current,
  );
  assert.equal(
    computeHealth({ kind: "Widget", metadata: {}, status: { conditions: [{ type: "Stalled", status: "True" }] } }),
    HealthStatus.Failed,
  );
});
