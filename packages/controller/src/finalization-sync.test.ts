import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { KnvCode } from "@driftless/api";
import type { KubeObject } from "@driftless/kube";
import { finalizationSync } from "./finalization-sync.ts";
import { planIdentity } from "./rbac-plan.ts";
import { validateSync } from "./validate.ts";

const deleting = { deletionTimestamp: "2026-01-01T00:00:00Z", generation: 3 };

function repoSync(spec: Record<string, unknown>, annotations: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RepoSync",
    metadata: { name: "repo-sync", namespace: "shop", annotations, ...deleting },
    spec,
  };
}

function rootSync(spec: Record<string, unknown>): KubeObject {
  return {
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RootSync",
    metadata: { name: "root-sync", namespace: "config-management-system", ...deleting },
    spec,
  };
}

const tokenWithoutSecret = { sourceFormat: "unstructured", git: { repo: "https://example.com/r.git", auth: "token" } };

void describe("finalizationSync: a reconciler for a deletion whatever the spec's source says", () => {
  void it("stands in for a RepoSync whose source no longer validates, keeping its identity and metadata", () => {
    const raw = repoSync(tokenWithoutSecret, { "configsync.gke.io/deletion-propagation-policy": "Foreground" });
    assert.equal(validateSync(raw, { allowFileRepos: false }).ok, false, "the fixture must be invalid");
    const result = finalizationSync(raw);
    assert.ok(result.ok, result.ok ? "" : result.errors.map((e) => e.message).join("\n"));
    assert.equal(result.sync.kind, "RepoSync");
    assert.equal(result.sync.metadata.name, "repo-sync");
    assert.equal(result.sync.metadata.namespace, "shop");
    assert.equal(result.sync.metadata.deletionTimestamp, deleting.deletionTimestamp);
    assert.equal(result.sync.metadata.generation, 3);
  });

  void it("ignores an invalid deletion policy, which the reconciler reads from the live sync", () => {
    const raw = repoSync(tokenWithoutSecret, { "configsync.gke.io/deletion-propagation-policy": "Sometimes" });
    assert.equal(finalizationSync(raw).ok, true);
  });

  void it("keeps a RootSync's roleRefs, so its reconciler is not bound to cluster-admin instead", () => {
    const roleRefs = [{ kind: "ClusterRole", name: "edit", namespace: "shop" }];
    const result = finalizationSync(rootSync({ ...tokenWithoutSecret, override: { roleRefs } }));
    assert.ok(result.ok && result.sync.kind === "RootSync");
    assert.deepEqual(result.sync.spec.override?.roleRefs, roleRefs);
    const plan = planIdentity(result.sync);
    assert.ok(plan.owned.some((b) => b.roleRef.name === "edit"));
    assert.ok(!plan.shared.some((b) => b.roleRef.name === "cluster-admin"));
  });

  void it("drops every other override: finalization runs on the defaults", () => {
    const result = finalizationSync(
      repoSync({ ...tokenWithoutSecret, override: { resources: [{ containerName: "reconciler", cpuRequest: "x" }] } }),
    );
    assert.ok(result.ok);
    assert.equal(result.sync.spec.override, undefined);
  });

  void it("refuses (KNV1061) a RootSync whose roleRefs are invalid: which rights its reconciler has is unknown", () => {
    const result = finalizationSync(rootSync({ ...tokenWithoutSecret, override: { roleRefs: [{ kind: "Nope" }] } }));
    assert.equal(result.ok, false);
    if (!result.ok) for (const error of result.errors) assert.equal(error.code, KnvCode.InvalidSync);
  });
});
