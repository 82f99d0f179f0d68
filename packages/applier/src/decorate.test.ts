import { test } from "node:test";
import assert from "node:assert/strict";
import { comparisonCandidate, decorate, isManagementDisabled, stripManagement } from "./decorate.ts";
import { toDesired } from "./desired.ts";
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

test("the comparison candidate carries the live object's commit token, so a new commit alone is no change", () => {
  const decorated = decorate(cm, { kind: "RepoSync", namespace: "team", name: "apps" });
  const token = (o: Record<string, unknown>): string | undefined =>
    (o["metadata"] as { annotations: Record<string, string> }).annotations["configmanagement.gke.io/token"];
  assert.equal(token(comparisonCandidate(decorated, { "configmanagement.gke.io/token": "old" }, "new")), "old");
  assert.equal(token(comparisonCandidate(decorated, {}, "new")), "new");
  assert.equal(token(comparisonCandidate(decorated, {})), undefined);
  assert.equal(token(decorated), undefined, "the decorated declaration was mutated");
});

test("toDesired gives cluster-scoped ids and dependencies the empty namespace", () => {
  const desired = toDesired({
    id: { group: "", kind: "Namespace", name: "team" },
    apiVersion: "v1",
    raw: { apiVersion: "v1", kind: "Namespace", metadata: { name: "team" } },
    sourcePath: "ns.yaml",
    sourceHash: "h",
    dependsOn: [{ group: "apiextensions.k8s.io", kind: "CustomResourceDefinition", name: "widgets.example.com" }],
  });
  assert.deepEqual(desired.id, { group: "", kind: "Namespace", namespace: "", name: "team" });
  assert.deepEqual(desired.dependsOn, [
    { group: "apiextensions.k8s.io", kind: "CustomResourceDefinition", namespace: "", name: "widgets.example.com" },
  ]);
});
