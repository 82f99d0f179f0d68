import { test } from "node:test";
import assert from "node:assert/strict";
import type { DeclaredObject } from "@driftless/source";
import { selfReconcileErrors } from "./self-reconcile.ts";

const declared = (group: string, kind: string, namespace: string, name: string): DeclaredObject =>
  ({
    group,
    version: "v1alpha1",
    kind,
    apiVersion: `${group}/v1alpha1`,
    metadata: { name, namespace },
    sourcePath: `config/${name}.yaml`,
  }) as unknown as DeclaredObject;

test("a source declaring its own sync's inventory ResourceGroup (or its overflow group) is KNV1069; another's is not", () => {
  const identity = { kind: "RepoSync", namespace: "team", name: "repo-sync" } as const;
  const errors = selfReconcileErrors(identity, [
    declared("kpt.dev", "ResourceGroup", "team", "repo-sync"),
    declared("kpt.dev", "ResourceGroup", "team", "repo-sync.pending"),
    declared("kpt.dev", "ResourceGroup", "team", "other"),
    declared("kpt.dev", "ResourceGroup", "elsewhere", "repo-sync"),
  ]);
  assert.deepEqual(
    errors.map((e) => e.message),
    [
      "ResourceGroup team/repo-sync must not manage itself in its repo: it is the inventory of this source's sync (remove it from the source, or manage it from another sync)",
      "ResourceGroup team/repo-sync.pending must not manage itself in its repo: it is the inventory of this source's sync (remove it from the source, or manage it from another sync)",
    ],
  );
});

test("a RepoSync's source declaring that RepoSync is KNV1069", () => {
  const identity = { kind: "RepoSync", namespace: "team", name: "repo-sync" } as const;
  const errors = selfReconcileErrors(identity, [declared("configsync.gke.io", "RepoSync", "team", "repo-sync")]);
  assert.equal(errors.length, 1);
  assert.equal(errors[0]?.code, "KNV1069");
});
