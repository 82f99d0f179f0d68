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
  test("reconcile of a deleted object is Pending while Terminating, Succeeded once gone, Failed when it is back", () => {
    assert.equal(reconcileOf("Succeeded", "Terminating", "Pending", "Delete"), "Pending");
    assert.equal(reconcileOf("Succeeded", "NotFound", "Pending", "Delete"), "Succeeded");
    assert.equal(reconcileOf("Succeeded", "Current", "Succeeded", "Delete"), "Failed");
    assert.equal(reconcileOf("Succeeded", "Unknown", "Pending", "Delete"), "Pending");
    assert.equal(reconcileOf("Failed", "Current", "Pending", "Delete"), "Skipped");
    assert.equal(reconcileOf("Pending", "Current", "Pending", "Delete"), "Pending");
  });
  const since = new Date("2026-03-01T10:00:00Z");
  test("OwnershipOverlap only when another inventory, or none, owns the object", () => {
    assert.equal(ownershipCondition("ns_repo-sync", "ns_repo-sync", since), undefined);
    assert.equal(ownershipCondition("ns_repo-sync", "config-management-system_root-sync", since)?.status, "True");
    assert.equal(ownershipCondition("ns_repo-sync", "", since)?.status, "Unknown");
  });
  test("OwnershipOverlap's messages are Config Sync's, word for word, dated as Config Sync dates it", () => {
    assert.deepEqual(ownershipCondition("ns_repo-sync", "config-management-system_root-sync", since), {
      type: "OwnershipOverlap",
      status: "True",
      reason: "Overlap",
      message:
        "This resource is owned by another ResourceGroup config-management-system_root-sync. " +
        "The status only reflects the specification for the current object in ResourceGroup config-management-system_root-sync.",
      lastTransitionTime: "2026-03-01T10:00:00Z",
    });
    assert.deepEqual(ownershipCondition("ns_repo-sync", undefined, since), {
      type: "OwnershipOverlap",
      status: "Unknown",
      reason: "Unknown",
      message:
        "This object is not owned by any inventory object. " +
        "The status for the current object may not reflect the specification for it in current ResourceGroup.",
      lastTransitionTime: "2026-03-01T10:00:00Z",
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
    assert.equal(again[1]?.lastTransitionTime, "2026-01-01T00:00:00Z");
    // Whole seconds, as metav1.Time marshals: a time with milliseconds is cut to its second.
    const changed = mergeConditions(
      first,
      groupConditions([entry("b", "Failed")]),
      new Date("2026-02-01T00:00:00.250Z"),
    );
    assert.equal(changed[1]?.lastTransitionTime, "2026-02-01T00:00:00Z");
  });
  test("a Failed object's Stalled condition is copied onto its entry", () => {
    const live = {
      status: {
        conditions: [
          { type: "Ready", status: "False" },
          {
            type: "Stalled",
            status: "True",
            reason: "Broken",
            message: "no",
            lastTransitionTime: "2026-01-01T00:00:00Z",
          },
        ],
      },
    };
    assert.deepEqual(failureConditions(live), [
      { type: "Stalled", status: "True", reason: "Broken", message: "no", lastTransitionTime: "2026-01-01T00:00:00Z" },
    ]);
    assert.deepEqual(failureConditions(undefined), []);
  });
  test("a transition time the ResourceGroup CRD would refuse (not date-time) is left out, not the whole status write", () => {
    const live = {
      status: { conditions: [{ type: "Stalled", status: "True", reason: "Broken", lastTransitionTime: "t" }] },
    };
    assert.deepEqual(failureConditions(live), [{ type: "Stalled", status: "True", reason: "Broken" }]);
  });
  test("a Config Connector resource not Current carries its own status.conditions, as Config Sync copies them", () => {
    const group = "sql.cnrm.cloud.google.com";
    const kcc = (conditions: unknown[]): Record<string, unknown> => ({
      apiVersion: `${group}/v1beta1`,
      kind: "SQLInstance",
      metadata: { generation: 1 },
      status: { observedGeneration: 1, conditions },
    });
    const updating = kcc([
      {
        type: "Ready",
        status: "False",
        reason: "UpdateFailed",
        message: "Update call failed: error applying desired state: googleapi: Error 403",
        lastTransitionTime: "2026-02-01T08:00:00Z",
      },
      { type: "Ready" }, // no status: the CRD would refuse it
    ]);
    assert.deepEqual(failureConditions(updating, group), [
      {
        type: "Ready",
        status: "False",
        reason: "UpdateFailed",
        message: "Update call failed: error applying desired state: googleapi: Error 403",
        lastTransitionTime: "2026-02-01T08:00:00Z",
      },
    ]);
    // Current: nothing copied; another group: only a Failed object's conditions are.
    assert.deepEqual(failureConditions(kcc([{ type: "Ready", status: "True" }]), group), []);
    assert.deepEqual(failureConditions(updating, "example.com"), []);
    // Terminating is not Current either.
    const terminating = { ...updating, metadata: { generation: 1, deletionTimestamp: "2026-02-01T09:00:00Z" } };
    assert.equal(failureConditions(terminating, group)[0]?.reason, "UpdateFailed");
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
      status: {
        failed: 2,
        conditions: [{ type: "Failed", status: "True", lastTransitionTime: "2026-01-02T00:00:00Z" }],
      },
    };
    assert.deepEqual(failureConditions(job), [
      {
        type: "Stalled",
        status: "True",
        reason: "JobFailed",
        message: "Job Failed. failed: 2/1",
        lastTransitionTime: "2026-01-02T00:00:00Z",
      },
    ]);
    // Not Failed: nothing to copy, whatever Stalled=False conditions it has.
    assert.deepEqual(
      failureConditions({ kind: "Widget", status: { conditions: [{ type: "Stalled", status: "False" }] } }),
      [],
    );
  });
});
