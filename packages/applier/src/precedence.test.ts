import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { DesiredObject } from "./desired.ts";
import { conflictingManager, isRootManager, ManagementConflictError } from "./precedence.ts";

const managed = (manager: string): Record<string, string> => ({
  "configmanagement.gke.io/managed": "enabled",
  "configsync.gke.io/manager": manager,
});
const root = { kind: "RootSync", namespace: "config-management-system", name: "root-sync" } as const;
const otherRoot = { kind: "RootSync", namespace: "config-management-system", name: "other" } as const;
const repo = { kind: "RepoSync", namespace: "team-a", name: "repo-sync" } as const;

void describe("conflictingManager (Config Sync's precedence)", () => {
  test("a RootSync takes over what a RepoSync manages", () => {
    assert.equal(conflictingManager(root, managed("team-a")), undefined);
    assert.equal(conflictingManager(otherRoot, managed("team-a_other")), undefined);
  });
  test("a RootSync does not take over another RootSync's object", () => {
    assert.equal(conflictingManager(otherRoot, managed(":root")), ":root");
    assert.equal(conflictingManager(root, managed(":root_other")), ":root_other");
  });
  test("a RepoSync takes over nothing another sync manages", () => {
    assert.equal(conflictingManager(repo, managed(":root")), ":root");
    assert.equal(conflictingManager(repo, managed("team-b")), "team-b");
  });
  test("its own objects, unmanaged ones and ones without a manager are anyone's", () => {
    assert.equal(conflictingManager(repo, managed("team-a")), undefined);
    assert.equal(conflictingManager(repo, { "configsync.gke.io/manager": ":root" }), undefined);
    assert.equal(conflictingManager(repo, { "configmanagement.gke.io/managed": "enabled" }), undefined);
  });
  test("isRootManager reads the scope, not a namespace that starts alike", () => {
    assert.equal(isRootManager(":root"), true);
    assert.equal(isRootManager(":root_x"), true);
    assert.equal(isRootManager(":rooted"), false);
    assert.equal(isRootManager("root"), false);
  });
  test("KNV1060 says what Config Sync's says, word for word, then names the object", () => {
    const desired: DesiredObject = {
      id: { group: "", kind: "ConfigMap", namespace: "team-a", name: "shared" },
      apiVersion: "v1",
      object: {},
      sourcePath: "cm.yaml",
      sourceHash: "abc",
      dependsOn: [],
    };
    const error = new ManagementConflictError(desired, ":root", "team-a");
    assert.equal(error.code, "KNV1060");
    assert.equal(
      error.message,
      'The "team-a" reconciler detected a management conflict with the ":root" reconciler. ' +
        "Remove the object from one of the sources of truth so that the object is only managed by one reconciler." +
        "\n\nConfigMap, team-a/shared",
    );
  });
});
