import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject } from "@driftless/kube";
import { syncReport } from "./sync-report.ts";

const sync = {
  apiVersion: "configsync.gke.io/v1beta1",
  kind: "RepoSync",
  metadata: { name: "repo-sync", namespace: "team-a" },
  spec: {},
  status: {},
} as KubeObject;

const entry = (name: string, status: string, conditions?: object[]): object => ({
  group: "",
  kind: "ConfigMap",
  namespace: "team-a",
  name,
  status,
  actuation: "Succeeded",
  reconcile: "Succeeded",
  ...(conditions === undefined ? {} : { conditions }),
});

test("an object another ResourceGroup owns (OwnershipOverlap=True) shows as Conflict, as nomos status shows it", () => {
  const group = {
    apiVersion: "kpt.dev/v1alpha1",
    kind: "ResourceGroup",
    metadata: { name: "repo-sync", namespace: "team-a" },
    status: {
      resourceStatuses: [
        entry("taken", "Current", [{ type: "OwnershipOverlap", status: "True", reason: "Overlap" }]),
        entry("orphan", "Current", [{ type: "OwnershipOverlap", status: "Unknown", reason: "Unknown" }]),
        entry("mine", "InProgress"),
      ],
    },
  } as unknown as KubeObject;
  const resources = syncReport(sync, group).resources ?? [];
  assert.deepEqual(
    resources.map((r) => [r.name, r.status]),
    [
      ["mine", "InProgress"],
      ["orphan", "Current"],
      ["taken", "Conflict"],
    ],
  );
});

test("managed objects are listed in nomos status's order: by namespace (cluster-scoped first), then kind.group/name", () => {
  const object = (group: string, kind: string, namespace: string, name: string): object => ({
    group,
    kind,
    namespace,
    name,
    status: "Current",
  });
  const group = {
    apiVersion: "kpt.dev/v1alpha1",
    kind: "ResourceGroup",
    metadata: { name: "repo-sync", namespace: "team-a" },
    status: {
      resourceStatuses: [
        object("apps", "Deployment", "team-b", "web"),
        object("", "ConfigMap", "team-b", "z"),
        object("", "Service", "team-a", "a"),
        object("rbac.authorization.k8s.io", "ClusterRole", "", "viewer"),
        object("", "Namespace", "", "team-a"),
      ],
    },
  } as unknown as KubeObject;
  assert.deepEqual(
    (syncReport(sync, group).resources ?? []).map((r) => `${r.namespace}:${r.kind}/${r.name}`),
    [":ClusterRole/viewer", ":Namespace/team-a", "team-a:Service/a", "team-b:ConfigMap/z", "team-b:Deployment/web"],
  );
});
