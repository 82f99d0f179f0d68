import assert from "node:assert/strict";
import { test } from "node:test";
import type { KubeObject } from "@driftless/kube";
import { awaitsApplier, computeGroupStatus, type LiveRead } from "./group-status.ts";

const now = new Date("2026-01-02T03:04:05.678Z");
const finish = {
  reason: "FinishReconciling",
  message: "finish reconciling",
  lastTransitionTime: "2026-01-02T03:04:05Z",
};
const emptyConditions = [
  { type: "Reconciling", status: "False", ...finish },
  { type: "Stalled", status: "False", ...finish },
];

function group(spec: Record<string, unknown>, status?: Record<string, unknown>): KubeObject {
  return {
    apiVersion: "kpt.dev/v1alpha1",
    kind: "ResourceGroup",
    metadata: {
      name: "group-a",
      namespace: "ns",
      generation: 2,
      labels: { "cli-utils.sigs.k8s.io/inventory-id": "group-a" },
    },
    spec,
    status: status ?? { observedGeneration: 2 },
  };
}

const configMap = (annotations: Record<string, string>): LiveRead => ({
  state: "found",
  object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "example", namespace: "ns", annotations } },
});
const listed = { group: "", kind: "ConfigMap", namespace: "ns", name: "example" };

test("a group listing nothing gets Config Sync's empty status: observedGeneration, Reconciling and Stalled False, no resourceStatuses", () => {
  assert.deepEqual(
    computeGroupStatus(group({}), () => ({ state: "absent" }), now),
    {
      observedGeneration: 2,
      conditions: emptyConditions,
    },
  );
});

test("entries as Config Sync's controller writes them: NotFound bare, Current with the token's 7-character sourceHash, Overlap when another inventory owns the object", () => {
  const spec = { resources: [listed] };
  assert.deepEqual(computeGroupStatus(group(spec), () => ({ state: "absent" }), now).resourceStatuses, [
    { ...listed, status: "NotFound" },
  ]);
  const owned = configMap({
    "config.k8s.io/owning-inventory": "group-a",
    "configmanagement.gke.io/token": "1234567890",
  });
  assert.deepEqual(computeGroupStatus(group(spec), () => owned, now).resourceStatuses, [
    { ...listed, status: "Current", sourceHash: "1234567" },
  ]);
  const other = configMap({
    "config.k8s.io/owning-inventory": "another",
    "configmanagement.gke.io/token": "1234567890",
  });
  assert.deepEqual(computeGroupStatus(group(spec), () => other, now).resourceStatuses, [
    {
      ...listed,
      status: "Current",
      sourceHash: "1234567",
      conditions: [
        {
          type: "OwnershipOverlap",
          status: "True",
          reason: "Overlap",
          message:
            "This resource is owned by another ResourceGroup another. The status only reflects the specification for the current object in ResourceGroup another.",
          lastTransitionTime: "2026-01-02T03:04:05Z",
        },
      ],
    },
  ]);
  assert.deepEqual(
    computeGroupStatus(group(spec), () => ({ state: "unreadable", why: "forbidden" }), now).resourceStatuses,
    [{ ...listed, status: "Unknown" }],
  );
});

test("an unchanged cluster computes an equal status: stored condition times are kept", () => {
  const other = configMap({ "config.k8s.io/owning-inventory": "another" });
  const first = computeGroupStatus(group({ resources: [listed] }), () => other, now);
  const later = computeGroupStatus(
    group({ resources: [listed] }, { ...first }),
    () => other,
    new Date("2026-02-01T00:00:00Z"),
  );
  assert.deepEqual(later, first);
});

test("the applier's strategy and actuation are kept; reconcile follows kstatus and a not-actuated object reads Unknown", () => {
  const stored = {
    observedGeneration: 2,
    resourceStatuses: [{ ...listed, status: "Current", strategy: "Apply", actuation: "Skipped", reconcile: "Skipped" }],
  };
  const owned = configMap({ "config.k8s.io/owning-inventory": "group-a" });
  assert.deepEqual(computeGroupStatus(group({ resources: [listed] }, stored), () => owned, now).resourceStatuses, [
    { ...listed, status: "Unknown", strategy: "Apply", actuation: "Skipped", reconcile: "Skipped" },
  ]);
});

test("a subgroup reads as its ResourceGroup's kstatus, and the group waits for its applier to observe the spec", () => {
  const sub: LiveRead = {
    state: "found",
    object: { apiVersion: "kpt.dev/v1alpha1", kind: "ResourceGroup", metadata: { name: "group-b", namespace: "ns" } },
  };
  const status = computeGroupStatus(group({ subgroups: [{ namespace: "ns", name: "group-b" }] }), () => sub, now);
  assert.deepEqual(
    status.subgroupStatuses?.map((s) => [s.name, s.status, s.conditions?.[0]?.reason]),
    [["group-b", "Current", "Unknown"]],
  );
  assert.equal(awaitsApplier(group({}, { observedGeneration: 1 })), true);
  assert.equal(awaitsApplier(group({})), false);
});
