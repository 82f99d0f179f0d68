import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RootSyncNamespace } from "@driftless/api";
import type { KubeObject } from "@driftless/kube";
import { syncOwnedLabels } from "./labels.ts";
import { pieceOwnerOf } from "./sync-watcher.ts";

const repoSync = { kind: "RepoSync", namespace: "team-b", name: "repo-sync" } as const;
const rootSync = { kind: "RootSync", namespace: RootSyncNamespace, name: "root-sync" } as const;

function labelled(labels: Record<string, string>, namespace?: string): KubeObject {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: "x", labels, ...(namespace === undefined ? {} : { namespace }) },
  };
}

void describe("the sync a piece of a reconciler belongs to", () => {
  void it("a RepoSync's piece is in its namespace or config-management-system", () => {
    assert.deepEqual(pieceOwnerOf(labelled(syncOwnedLabels(repoSync), "team-b")), repoSync);
    assert.deepEqual(pieceOwnerOf(labelled(syncOwnedLabels(repoSync), RootSyncNamespace)), repoSync);
  });

  void it("a RoleBinding another tenant labels for a RepoSync of another namespace is none of that sync's", () => {
    assert.equal(pieceOwnerOf(labelled(syncOwnedLabels(repoSync), "team-a")), undefined);
  });

  void it("a RootSync's roleRef bindings may be in any namespace, and a ClusterRoleBinding in none", () => {
    assert.deepEqual(pieceOwnerOf(labelled(syncOwnedLabels(rootSync), "team-a")), rootSync);
    assert.deepEqual(pieceOwnerOf(labelled(syncOwnedLabels(rootSync))), rootSync);
  });
});
