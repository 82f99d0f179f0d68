import assert from "node:assert/strict";
import { test } from "node:test";
import { resourceGroupMapping } from "@driftless/applier";
import type { KubeObject } from "@driftless/kube";
import { trimmed } from "./kind-watches.ts";

test("a ResourceGroup is cached for its kstatus alone: no spec, resourceStatuses or subgroupStatuses, no managedFields", () => {
  const conditions = [{ type: "Stalled", status: "False", reason: "FinishReconciling", message: "finish reconciling" }];
  const group: KubeObject = {
    apiVersion: "kpt.dev/v1alpha1",
    kind: "ResourceGroup",
    metadata: { name: "root-sync", namespace: "config-management-system", generation: 3, managedFields: [{}] },
    spec: { resources: [{ group: "", kind: "ConfigMap", namespace: "a", name: "b" }] },
    status: {
      observedGeneration: 3,
      resourceStatuses: [{ group: "", kind: "ConfigMap", namespace: "a", name: "b", status: "Current" }],
      subgroupStatuses: [{ namespace: "a", name: "c", status: "Current" }],
      conditions,
    },
  } as KubeObject;
  assert.deepEqual(trimmed(group, resourceGroupMapping, false), {
    apiVersion: "kpt.dev/v1alpha1",
    kind: "ResourceGroup",
    metadata: { name: "root-sync", namespace: "config-management-system", generation: 3 },
    status: { observedGeneration: 3, conditions },
  });
});
