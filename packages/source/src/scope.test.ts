import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Manifest } from "./manifest.ts";
import { placeObject } from "./scope.ts";

function manifest(kind: string, namespace?: string): Manifest {
  return {
    apiVersion: "v1",
    kind,
    group: "",
    version: "v1",
    metadata: { name: "x", ...(namespace !== undefined ? { namespace } : {}) },
    raw: {},
    sourcePath: "x.yaml",
    dependsOn: [],
  };
}

const root = { kind: "RootSync" } as const;
const repo = { kind: "RepoSync", namespace: "team-a" } as const;

void describe("placeObject", () => {
  void it('puts a RootSync\'s namespaced object without a namespace in "default", as Config Sync does', () => {
    assert.deepEqual(placeObject(manifest("ConfigMap"), true, root), { ok: true, namespace: "default" });
    assert.deepEqual(placeObject(manifest("ConfigMap", "shop"), true, root), { ok: true, namespace: "shop" });
  });

  void it("puts a RepoSync's namespaced object without a namespace in the RepoSync's namespace", () => {
    assert.deepEqual(placeObject(manifest("ConfigMap"), true, repo), { ok: true, namespace: "team-a" });
    assert.deepEqual(placeObject(manifest("ConfigMap", "team-a"), true, repo), { ok: true, namespace: "team-a" });
  });

  void it("refuses a RepoSync object in another namespace (KNV1058)", () => {
    const placement = placeObject(manifest("ConfigMap", "team-b"), true, repo);
    assert.ok(!placement.ok);
    assert.equal(placement.error.code, "KNV1058");
    assert.match(
      placement.error.message,
      /^x\.yaml: ConfigMap "team-b\/x": a RepoSync in namespace "team-a" may only declare objects in that namespace/,
    );
  });

  void it("refuses a cluster-scoped object in a RepoSync (KNV1058)", () => {
    const placement = placeObject(manifest("Namespace"), false, repo);
    assert.ok(!placement.ok);
    assert.equal(placement.error.code, "KNV1058");
    assert.match(placement.error.message, /Namespace is cluster-scoped/);
  });

  void it("refuses a cluster-scoped object that declares a namespace (KNV1052), and places it nowhere otherwise", () => {
    const placement = placeObject(manifest("ClusterRole", "default"), false, root);
    assert.ok(!placement.ok);
    assert.equal(placement.error.code, "KNV1052");
    assert.deepEqual(placeObject(manifest("ClusterRole"), false, root), { ok: true, namespace: "" });
  });
});
