import assert from "node:assert/strict";
import { test } from "node:test";
import { toDriftlessError } from "@driftless/api";
import { KubeApiError } from "@driftless/kube";
import { reportsSetupFailure, setupFailureReason } from "./setup-failure.ts";

const refused = (status: number, kind: string): KubeApiError =>
  new KubeApiError({
    status,
    reason: status === 404 ? "NotFound" : status === 409 ? "Conflict" : "Invalid",
    serverMessage: "refused",
    operation: `create ${kind}`,
    resource: { group: "", kind, name: "x" },
  });

test("a failed setup step is reported under Config Sync's reason for it", () => {
  assert.equal(setupFailureReason(refused(404, "RoleBinding")), "RoleBinding");
  assert.equal(setupFailureReason(refused(404, "ClusterRoleBinding")), "ClusterRoleBinding");
  assert.equal(setupFailureReason(refused(422, "Deployment")), "Deployment");
  assert.equal(setupFailureReason(refused(403, "ServiceAccount")), "ServiceAccount");
  assert.equal(setupFailureReason(toDriftlessError(new Error("redis down"))), "Error");
});

test("what retrying cannot fix goes on status at once; a transient failure once it keeps failing", () => {
  assert.equal(reportsSetupFailure(refused(404, "RoleBinding"), { attempt: 1, maxAttempts: 10 }), true);
  assert.equal(reportsSetupFailure(refused(422, "Deployment"), { attempt: 1, maxAttempts: 10 }), true);
  const conflict = refused(409, "Deployment");
  assert.equal(reportsSetupFailure(conflict, { attempt: 1, maxAttempts: 10 }), false);
  assert.equal(reportsSetupFailure(conflict, { attempt: 3, maxAttempts: 10 }), true);
  assert.equal(reportsSetupFailure(conflict, { attempt: 2, maxAttempts: 2 }), true);
  assert.equal(reportsSetupFailure(conflict, undefined), true);
});
