import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { toConfigSyncError } from "@driftless/api";
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
  test("root-sync and repo-sync of one kind share a manager value; the owning inventory keeps them apart", () => {
    const owned = (manager: string, inventory: string): Record<string, string> => ({
      ...managed(manager),
      "config.k8s.io/owning-inventory": inventory,
    });
    const repoNamedRoot = { kind: "RepoSync", namespace: "team-a", name: "root-sync" } as const;
    assert.equal(conflictingManager(repoNamedRoot, owned("team-a", "team-a_repo-sync")), "team-a_repo-sync");
    assert.equal(conflictingManager(repo, owned("team-a", "team-a_root-sync")), "team-a_root-sync");
    const rootNamedRepo = { kind: "RootSync", namespace: "config-management-system", name: "repo-sync" } as const;
    assert.equal(
      conflictingManager(rootNamedRepo, owned(":root", "config-management-system_root-sync")),
      ":root_root-sync",
    );
    assert.equal(conflictingManager(root, owned(":root", "config-management-system_repo-sync")), ":root_repo-sync");
    // Its own inventory, or none (Config Sync's objects before inventories), is no conflict.
    assert.equal(conflictingManager(repoNamedRoot, owned("team-a", "team-a_root-sync")), undefined);
    assert.equal(conflictingManager(repoNamedRoot, managed("team-a")), undefined);
  });
  test("a RepoSync adopts no object another inventory owns, whatever its manager says (AdoptIfNoInventory)", () => {
    assert.equal(conflictingManager(repo, { "config.k8s.io/owning-inventory": "kpt-system_app" }), "kpt-system_app");
    assert.equal(conflictingManager(repo, { "config.k8s.io/owning-inventory": "9f2c-uuid" }), "9f2c-uuid");
    assert.equal(conflictingManager(repo, { "config.k8s.io/owning-inventory": "team-b_other" }), "team-b_other");
    assert.equal(
      conflictingManager(repo, { "config.k8s.io/owning-inventory": "config-management-system_root-sync" }),
      ":root",
    );
  });
  test("a RootSync adopts any inventory's object but another RootSync's (AdoptAll, RootSync precedence kept)", () => {
    assert.equal(conflictingManager(root, { "config.k8s.io/owning-inventory": "team-a_repo-sync" }), undefined);
    assert.equal(conflictingManager(root, { "config.k8s.io/owning-inventory": "9f2c-uuid" }), undefined);
    assert.equal(
      conflictingManager(root, { "config.k8s.io/owning-inventory": "config-management-system_other" }),
      ":root_other",
    );
    assert.equal(conflictingManager(otherRoot, managed("team-a")), undefined);
  });
  void describe("a Namespace another RootSync holds only implicitly", () => {
    // What driftless (and Config Sync) write on an implicit Namespace: no source path, detach, the holder's inventory.
    const implicit = {
      ...managed(":root_other"),
      "config.k8s.io/owning-inventory": "config-management-system_other",
      "client.lifecycle.config.k8s.io/deletion": "detach",
    };
    const namespace = { group: "", kind: "Namespace", name: "shipping" };
    const fromFile = { id: namespace, sourcePath: "acme/ns.yaml" };
    test("is taken by a RootSync declaring it in a file (Config Sync's AdoptAll)", () => {
      assert.equal(conflictingManager(root, implicit, fromFile), undefined);
    });
    test("stays the holder's for a RootSync declaring it implicitly too, or a RepoSync", () => {
      assert.equal(conflictingManager(root, implicit, { id: namespace, sourcePath: "" }), ":root_other");
      assert.equal(conflictingManager(repo, implicit, fromFile), ":root_other");
      assert.equal(conflictingManager(root, implicit), ":root_other");
    });
    test("stays the holder's when it is declared in the holder's file, or not detached", () => {
      const declared = { ...implicit, "configmanagement.gke.io/source-path": "config/ns.yaml" };
      assert.equal(conflictingManager(root, declared, fromFile), ":root_other");
      const { "client.lifecycle.config.k8s.io/deletion": _detach, ...attached } = implicit;
      assert.equal(conflictingManager(root, attached, fromFile), ":root_other");
    });
    test("only a Namespace: any other kind so marked stays the holder's", () => {
      const configMap = {
        id: { group: "", kind: "ConfigMap", namespace: "shipping", name: "cm" },
        sourcePath: "cm.yaml",
      };
      assert.equal(conflictingManager(root, implicit, configMap), ":root_other");
    });
  });
  test("isRootManager reads the scope, not a namespace that starts alike", () => {
    assert.equal(isRootManager(":root"), true);
    assert.equal(isRootManager(":root_x"), true);
    assert.equal(isRootManager(":rooted"), false);
    assert.equal(isRootManager("root"), false);
  });
  test("KNV1060 says what Config Sync's says, word for word, and status prints the object after it as Config Sync's body does", () => {
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
        "Remove the object from one of the sources of truth so that the object is only managed by one reconciler.",
    );
    assert.equal(
      toConfigSyncError(error).errorMessage,
      'KNV1060: The "team-a" reconciler detected a management conflict with the ":root" reconciler. ' +
        "Remove the object from one of the sources of truth so that the object is only managed by one reconciler." +
        "\n\nsource: cm.yaml\nnamespace: team-a\nmetadata.name: shared\ngroup:\nversion: v1\nkind: ConfigMap" +
        "\n\nFor more information, see https://g.co/cloud/acm-errors#knv1060",
    );
  });
});
