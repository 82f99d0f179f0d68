import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  failureConditions,
  groupConditions,
  mergeConditions,
  ownershipCondition,
  reconcileOf,
  reportedStatus,
  type ResourceStatusEntry,
} from "./resource-status.ts";

const entry = (name: string, status: string): ResourceStatusEntry => ({
  group: "apps",
  kind: "Deployment",
  namespace: "ns",
  name,
  status,
  strategy: "Apply",
  actuation: "Succeeded",
  reconcile: "Succeeded",
});

void describe("resource statuses as Config Sync's ResourceGroup controller reports them", () => {
  test("status is Unknown until the declaration was applied, unless the object is gone", () => {
    assert.equal(reportedStatus("Succeeded", "InProgress"), "InProgress");
    assert.equal(reportedStatus("Failed", "Current"), "Unknown");
    assert.equal(reportedStatus("Skipped", "NotFound"), "NotFound");
  });
  test("reconcile follows kstatus after a successful apply", () => {
    assert.equal(reconcileOf("Succeeded", "Current", "Pending"), "Succeeded");
    assert.equal(reconcileOf("Succeeded", "InProgress", "Succeeded"), "Pending");
    assert.equal(reconcileOf("Succeeded", "NotFound", "Succeeded"), "Failed");
    assert.equal(reconcileOf("Succeeded", "Unknown", "Succeeded"), "Succeeded");
    assert.equal(reconcileOf("Failed", "Current", "Succeeded"), "Skipped");
  });
  test("OwnershipOverlap only when another inventory, or none, owns the object", () => {
    assert.equal(ownershipCondition("ns_repo-sync", "ns_repo-sync"), undefined);
    assert.equal(ownershipCondition("ns_repo-sync", "config-management-system_root-sync")?.status, "True");
    assert.equal(ownershipCondition("ns_repo-sync", "")?.status, "Unknown");
  });
  test("OwnershipOverlap's messages are Config Sync's, word for word", () => {
    assert.deepEqual(ownershipCondition("ns_repo-sync", "config-management-system_root-sync"), {
      type: "OwnershipOverlap",
      status: "True",
      reason: "Overlap",
      message:
        "This resource is owned by another ResourceGroup config-management-system_root-sync. " +
        "The status only reflects the specification for the current object in ResourceGroup config-management-system_root-sync.",
    });
    assert.deepEqual(ownershipCondition("ns_repo-sync", undefined), {
      type: "OwnershipOverlap",
      status: "Unknown",
      reason: "Unknown",
      message:
        "This object is not owned by any inventory object. " +
        "The status for the current object may not reflect the specification for it in current ResourceGroup.",
    });
  });
  test("Stalled names the Failed objects", () => {
    const [reconciling, stalled] = groupConditions([entry("a", "Current"), entry("b", "Failed")]);
    assert.equal(reconciling?.status, "False");
    assert.equal(stalled?.status, "True");
    // Config Sync's wording: the list follows the colon without a space.
    assert.equal(stalled?.message, "The following components failed:apps/Deployment/ns/b");
    const [, two] = groupConditions([entry("b", "Failed"), entry("c", "Failed")]);
    assert.equal(two?.message, "The following components failed:apps/Deployment/ns/b, apps/Deployment/ns/c");
    assert.equal(groupConditions([entry("a", "Current")])[1]?.status, "False");
  });
  test("merging keeps an unchanged condition's transition time and puts Reconciling, Stalled first", () => {
    const earlier = new Date("2026-01-01T00:00:00Z");
    const first = mergeConditions([{ type: "Zeta", status: "True" }], groupConditions([]), earlier);
    assert.deepEqual(
      first.map((c) => c.type),
      ["Reconciling", "Stalled", "Zeta"],
    );
    const again = mergeConditions(first, groupConditions([]), new Date());
    assert.equal(again[1]?.lastTransitionTime, earlier.toISOString());
    const changed = mergeConditions(first, groupConditions([entry("b", "Failed")]), new Date("2026-02-01T00:00:00Z"));
    assert.equal(changed[1]?.lastTransitionTime, "2026-02-01T00:00:00.000Z");
  });
  test("a Failed object's Stalled condition is copied onto its entry", () => {
    const live = {
      status: {
        conditions: [
          { type: "Ready", status: "False" },
          { type: "Stalled", status: "True", reason: "Broken", message: "no", lastTransitionTime: "t" },
        ],
      },
    };
    assert.deepEqual(failureConditions(live), [
      { type: "Stalled", status: "True", reason: "Broken", message: "no", lastTransitionTime: "t" },
    ]);
    assert.deepEqual(failureConditions(undefined), []);
  });
  test("a Failed object's entry carries the condition kstatus gives for it, its own or read from its kind", () => {
    const deployment = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { generation: 1 },
      spec: { replicas: 1, progressDeadlineSeconds: 2 },
      status: {
        observedGeneration: 1,
        conditions: [
          {
            type: "Progressing",
            status: "False",
            reason: "ProgressDeadlineExceeded",
            message: 'ReplicaSet "web-1" has timed out progressing.',
            lastTransitionTime: "2026-01-01T00:00:00Z",
          },
        ],
      },
    };
    assert.deepEqual(failureConditions(deployment), [
      {
        type: "Stalled",
        status: "True",
        reason: "ProgressDeadlineExceeded",
        message: 'ReplicaSet "web-1" has timed out progressing.',
        lastTransitionTime: "2026-01-01T00:00:00Z",
      },
    ]);
    const job = {
      apiVersion: "batch/v1",
      kind: "Job",
      spec: { completions: 1 },
      status: { failed: 2, conditions: [{ type: "Failed", status: "True", lastTransitionTime: "t" }] },
    };
    assert.deepEqual(failureConditions(job), [
      {
        type: "Stalled",
        status: "True",
        reason: "JobFailed",
        message: "Job Failed. failed: 2/1",
        lastTransitionTime: "t",
      },
    ]);
    // Not Failed: nothing to copy, whatever Stalled=False conditions it has.
    assert.deepEqual(
      failureConditions({ kind: "Widget", status: { conditions: [{ type: "Stalled", status: "False" }] } }),
      [],
    );
  });
});
