import { test } from "node:test";
import assert from "node:assert/strict";
import type { ApplyOptions } from "./apply-options.ts";
import { Operation } from "./apply-outcome.ts";
import {
  DependencyActuation,
  DependencyNotAppliedError,
  DependencyNotReconciledError,
  DependencyReadiness,
} from "./dependency-readiness.ts";
import type { DesiredObject } from "./desired.ts";
import { HealthStatus } from "./kstatus.ts";
import { idKey, objMetadataKey } from "./object-id.ts";

const pod = (name: string): DesiredObject => ({
  id: { group: "", kind: "Pod", namespace: "bookstore", name },
  apiVersion: "v1",
  object: {},
  sourcePath: `${name}.yaml`,
  sourceHash: "",
  dependsOn: [],
});

test("a dependency not reconciled is named by its cli-utils key, as Config Sync's e2e TestDependencyWithReconciliation matches it", () => {
  const timedOut = new DependencyNotReconciledError(pod("pod4"), pod("pod3").id, HealthStatus.InProgress);
  assert.equal(
    timedOut.message,
    "skipped apply of Pod, bookstore/pod4: dependency apply reconcile timeout: bookstore_pod3__Pod",
  );
  assert.equal(timedOut.code, "KNV2009");
  const failed = new DependencyNotReconciledError(pod("pod4"), pod("pod3").id, HealthStatus.Failed);
  assert.equal(
    failed.message,
    "skipped apply of Pod, bookstore/pod4: dependency apply reconcile failed: bookstore_pod3__Pod",
  );
});

test("a dependency not applied says whether its apply failed or was itself skipped, as cli-utils records it", () => {
  const failed = new DependencyNotAppliedError(pod("b"), pod("a").id, DependencyActuation.Failed);
  assert.equal(
    failed.message,
    "skipped apply of Pod, bookstore/b: dependency apply actuation failed: bookstore_a__Pod",
  );
  const skipped = new DependencyNotAppliedError(pod("c"), pod("b").id, DependencyActuation.Skipped);
  assert.equal(
    skipped.message,
    "skipped apply of Pod, bookstore/c: dependency apply actuation skipped: bookstore_b__Pod",
  );
});

test("cli-utils' object key: namespace_name_group_Kind, empty parts kept, ':' in an RBAC name written as '__'", () => {
  assert.equal(objMetadataKey({ group: "", kind: "Namespace", name: "shipping" }), "_shipping__Namespace");
  assert.equal(
    objMetadataKey({ group: "apps", kind: "Deployment", namespace: "shop", name: "web" }),
    "shop_web_apps_Deployment",
  );
  assert.equal(
    objMetadataKey({ group: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:reader" }),
    "_system__reader_rbac.authorization.k8s.io_ClusterRole",
  );
  // Only RBAC kinds transcode their names; another kind's ':' is kept.
  assert.equal(objMetadataKey({ group: "", kind: "ConfigMap", namespace: "a", name: "x:y" }), "a_x:y__ConfigMap");
});

test("a ReplicaSet dependency with a crash-looping Pod is Failed at once, as cli-utils reads it: its dependents need not wait out the timeout", async () => {
  const replicaSets = {
    group: "apps",
    version: "v1",
    kind: "ReplicaSet",
    resource: "replicasets",
    namespaced: true,
    verbs: ["get", "list"],
  };
  const live = {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name: "web", namespace: "bookstore", generation: 1 },
    spec: { replicas: 1, selector: { matchLabels: { app: "web" } } },
    status: { observedGeneration: 1, replicas: 1, fullyLabeledReplicas: 1 },
  };
  const crashLooping = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web-1", namespace: "bookstore", labels: { app: "web" } },
    status: {
      phase: "Running",
      containerStatuses: [{ name: "web", state: { waiting: { reason: "CrashLoopBackOff" } } }],
    },
  };
  const readiness = new DependencyReadiness({
    live: { get: () => Promise.resolve(live) },
    client: { list: () => Promise.resolve({ items: [crashLooping], resourceVersion: "1" }) },
    reconcileTimeoutMs: 60_000,
    dependencyPollMs: 1,
  } as unknown as ApplyOptions);
  const id = { group: "apps", kind: "ReplicaSet", namespace: "bookstore", name: "web" };
  readiness.applied({
    desired: { ...pod("web"), id, apiVersion: "apps/v1" },
    operation: Operation.Created,
    health: HealthStatus.InProgress,
    mapping: replicaSets,
  });
  const started = Date.now();
  assert.equal(await readiness.current(idKey(id)), HealthStatus.Failed);
  assert.ok(Date.now() - started < 5_000, "the wait ran towards its timeout");
});
