import { test } from "node:test";
import assert from "node:assert/strict";
import { decorate, isManagementDisabled, stripManagement } from "./decorate.ts";
import type { DesiredObject } from "./desired.ts";

const cm: DesiredObject = {
  id: { group: "", kind: "ConfigMap", namespace: "team", name: "settings" },
  apiVersion: "v1",
  object: {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "settings", namespace: "team", labels: { app: "x" } },
    data: { a: "1" },
  },
  sourcePath: "team/settings.yaml",
  sourceHash: "abc1234",
  dependsOn: [],
};

test("decorates a declared object with Config Sync's management label and annotations, leaving the declaration untouched", () => {
  const out = decorate(cm, { kind: "RepoSync", namespace: "team", name: "apps" });
  const meta = out["metadata"] as { labels: Record<string, string>; annotations: Record<string, string> };
  assert.equal(meta.labels["app.kubernetes.io/managed-by"], "configmanagement.gke.io");
  assert.equal(meta.labels["app"], "x");
  assert.equal(meta.annotations["configmanagement.gke.io/managed"], "enabled");
  assert.equal(meta.annotations["configsync.gke.io/manager"], "team_apps");
  assert.equal(meta.annotations["config.k8s.io/owning-inventory"], "team_apps");
  assert.equal(meta.annotations["configmanagement.gke.io/source-path"], "team/settings.yaml");
  assert.equal(meta.annotations["configsync.gke.io/resource-id"], "_configmap_team_settings");
  assert.equal((cm.object["metadata"] as { annotations?: unknown }).annotations, undefined, "the input was mutated");
});

test("strips only management metadata when an object leaves management", () => {
  const live = decorate(cm, { kind: "RootSync", namespace: "config-management-system", name: "root-sync" });
  (live["metadata"] as { annotations: Record<string, string> }).annotations["someone/else"] = "keep";
  (live["metadata"] as { annotations: Record<string, string> }).annotations["driftless.dev/last-applied"] = "x";
  const stripped = stripManagement(live, "driftless.dev/last-applied");
  assert.ok(stripped !== undefined);
  const meta = stripped["metadata"] as { labels: Record<string, string>; annotations: Record<string, string> };
  assert.deepEqual(meta.annotations, { "someone/else": "keep" });
  assert.deepEqual(meta.labels, { app: "x" });
  assert.equal(
    stripManagement(stripped, "driftless.dev/last-applied"),
    undefined,
    "nothing left to strip must mean no write",
  );
});

test("recognises configmanagement.gke.io/managed: disabled in a declaration", () => {
  assert.equal(isManagementDisabled(cm.object), false);
  assert.equal(
    isManagementDisabled({ metadata: { annotations: { "configmanagement.gke.io/managed": "disabled" } } }),
    true,
  );
});
