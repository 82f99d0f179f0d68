/**
 * The wait after apply reads a ReplicaSet's and a StatefulSet's Pods, as cli-utils' status watcher (Config
 * Sync's applier) does: a Pod that kstatus calls Failed makes its controller Failed, which ends the wait.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  coreApi,
  createRootSync,
  customApi,
  rootSynced,
  rootSyncNamespace,
  rootSyncStatus,
  startReconciler,
  suffix,
  testNamespace,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";

const json = (obj: unknown): string => JSON.stringify(obj);

test("a ReplicaSet or StatefulSet whose Pod cannot be scheduled ends the wait after apply as Failed, without a reconcile timeout on status.sync", async (t) => {
  const name = `wlw-${suffix()}`;
  const namespace = await testNamespace(t, "wlw");
  // No scheduler here: the Pods are made before their controllers and told unschedulable through
  // pods/status, as a scheduler would say it. The ReplicaSet adopts its Pod (matching labels, no owner).
  for (const app of ["rs", "sts"]) await unschedulablePod(namespace, app);
  const repo = await TestRepo.create(t);
  await repo.write("config/rs.yaml", json(workload("ReplicaSet", namespace, "rs")));
  await repo.write("config/sts.yaml", json(workload("StatefulSet", namespace, "sts")));
  const commit = await repo.commit("workloads whose Pods cannot be scheduled");
  // Long enough that a pass waiting it out would not be synced within the check below.
  await createRootSync(name, repo, { spec: { override: { reconcileTimeout: "3m" } } });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });

  // kstatus calls a Pod unschedulable for 15 s Failed: the wait ends then, not after 3 minutes.
  await rootSynced(name, commit, 90_000);
  const sync = (await rootSyncStatus(name))["sync"] as JsonObject;
  assert.deepEqual(sync["errors"] ?? [], [], "a Failed workload is not a reconcile timeout");
  // The ResourceGroup reads each object alone (Config Sync's controller): InProgress, reconcile Pending, not Stalled.
  const group = await resourceGroup(name);
  for (const app of ["rs", "sts"]) {
    const entry = group.entries.find((s) => s["name"] === app);
    assert.deepEqual([entry?.["status"], entry?.["reconcile"]], ["InProgress", "Pending"], JSON.stringify(entry));
  }
  const stalled = group.conditions.find((c) => c["type"] === "Stalled");
  assert.equal(stalled?.["status"], "False", JSON.stringify(group.conditions));
});

function workload(kind: "ReplicaSet" | "StatefulSet", namespace: string, app: string): JsonObject {
  return {
    apiVersion: "apps/v1",
    kind,
    metadata: { name: app, namespace },
    spec: {
      replicas: 1,
      ...(kind === "StatefulSet" ? { serviceName: app } : {}),
      selector: { matchLabels: { app } },
      template: { metadata: { labels: { app } }, spec: { containers: [{ name: app, image: "nginx" }] } },
    },
  };
}

async function unschedulablePod(namespace: string, app: string): Promise<void> {
  const core = coreApi();
  const pod = await core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name: `${app}-0`, namespace, labels: { app } },
      spec: { containers: [{ name: app, image: "nginx" }] },
    },
  });
  pod.status = {
    phase: "Pending",
    conditions: [
      {
        type: "PodScheduled",
        status: "False",
        reason: "Unschedulable",
        message: "0/1 nodes are available: 1 Insufficient cpu.",
        lastTransitionTime: new Date(),
      },
    ],
  };
  await core.replaceNamespacedPodStatus({ namespace, name: `${app}-0`, body: pod });
}

async function resourceGroup(name: string): Promise<{ entries: JsonObject[]; conditions: JsonObject[] }> {
  const group = (await customApi().getNamespacedCustomObject({
    group: "kpt.dev",
    version: "v1alpha1",
    namespace: rootSyncNamespace,
    plural: "resourcegroups",
    name,
  })) as JsonObject;
  const status = (group["status"] ?? {}) as JsonObject;
  return {
    entries: (status["resourceStatuses"] ?? []) as JsonObject[],
    conditions: (status["conditions"] ?? []) as JsonObject[],
  };
}
