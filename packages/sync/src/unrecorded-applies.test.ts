import { test } from "node:test";
import assert from "node:assert/strict";
import { ApplyError, Operation, type ApplyOutcome, type DesiredObject } from "@driftless/applier";
import { KubeApiError } from "@driftless/kube";
import { unrecordedApplies } from "./unrecorded-applies.ts";

function desired(name: string): DesiredObject {
  return {
    id: { group: "apps", kind: "Deployment", namespace: "shop", name },
    apiVersion: "apps/v1",
    object: {},
    sourcePath: `${name}.yaml`,
    sourceHash: "abc1234",
    dependsOn: [],
  };
}

function refused(name: string, status: number, liveOwned: boolean): ApplyOutcome {
  const cause = new KubeApiError({
    status,
    reason: "Invalid",
    operation: liveOwned ? "update" : "create",
    serverMessage: "refused",
  });
  return {
    desired: desired(name),
    operation: Operation.Failed,
    error: new ApplyError(desired(name), cause),
    liveOwned,
  };
}

test("a new object whose create or adoption the server refused is not recorded; a refused update of this sync's object, a 5xx or an object recorded before stays", () => {
  const unrecorded = unrecordedApplies(
    [
      refused("refused-create", 422, false),
      // This sync's already (an inventory lost with its ResourceGroup): recorded, so a later commit prunes it.
      refused("refused-update", 422, true),
      refused("server-error", 500, false),
      refused("recorded-before", 403, false),
      { desired: desired("skipped"), operation: Operation.Skipped },
      { desired: desired("created"), operation: Operation.Created },
    ],
    [desired("recorded-before").id],
  );
  assert.deepEqual([...unrecorded].sort(), ["apps/Deployment/shop/refused-create", "apps/Deployment/shop/skipped"]);
});
