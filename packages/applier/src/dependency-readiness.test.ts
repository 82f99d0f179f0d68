import { test } from "node:test";
import assert from "node:assert/strict";
import {
  DependencyActuation,
  DependencyNotAppliedError,
  DependencyNotReconciledError,
} from "./dependency-readiness.ts";
import type { DesiredObject } from "./desired.ts";
import { HealthStatus } from "./kstatus.ts";
import { objMetadataKey } from "./object-id.ts";

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
