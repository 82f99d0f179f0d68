import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  inventoryId,
  managerAnnotationValue,
  nsReconcilerName,
  parseManagerAnnotation,
  reconcilerName,
  resourceId,
  rootReconcilerName,
} from "./names.ts";

void describe("reconciler names", () => {
  void it("keeps the short root-reconciler name for the default RootSync", () => {
    assert.equal(rootReconcilerName("root-sync"), "root-reconciler");
    assert.equal(rootReconcilerName("platform"), "root-reconciler-platform");
  });

  void it("suffixes a non-default RepoSync's reconciler with the name length", () => {
    assert.equal(nsReconcilerName("bookstore", "repo-sync"), "ns-reconciler-bookstore");
    assert.equal(nsReconcilerName("bookstore", "frontend"), "ns-reconciler-bookstore-frontend-8");
  });

  void it("tells apart namespace/name pairs that would otherwise join to the same string", () => {
    assert.notEqual(nsReconcilerName("a-b", "c"), nsReconcilerName("a", "b-c"));
  });

  void it("dispatches on kind", () => {
    assert.equal(reconcilerName("RootSync", "config-management-system", "x"), "root-reconciler-x");
    assert.equal(reconcilerName("RepoSync", "shop", "x"), "ns-reconciler-shop-x-1");
  });
});

void describe("managerAnnotationValue", () => {
  void it("writes only the scope for the default sync names, as Config Sync does", () => {
    assert.equal(managerAnnotationValue("RootSync", "config-management-system", "root-sync"), ":root");
    assert.equal(managerAnnotationValue("RepoSync", "bookstore", "repo-sync"), "bookstore");
  });

  void it("writes scope_name otherwise", () => {
    assert.equal(managerAnnotationValue("RootSync", "config-management-system", "platform"), ":root_platform");
    assert.equal(managerAnnotationValue("RepoSync", "bookstore", "frontend"), "bookstore_frontend");
  });

  void it("parses back to the sync that wrote it", () => {
    assert.deepEqual(parseManagerAnnotation(":root"), {
      kind: "RootSync",
      namespace: "config-management-system",
      name: "root-sync",
    });
    assert.deepEqual(parseManagerAnnotation(":root_platform"), {
      kind: "RootSync",
      namespace: "config-management-system",
      name: "platform",
    });
    assert.deepEqual(parseManagerAnnotation("bookstore"), {
      kind: "RepoSync",
      namespace: "bookstore",
      name: "repo-sync",
    });
    assert.deepEqual(parseManagerAnnotation("bookstore_frontend"), {
      kind: "RepoSync",
      namespace: "bookstore",
      name: "frontend",
    });
    assert.equal(parseManagerAnnotation(""), undefined);
    assert.equal(parseManagerAnnotation(undefined), undefined);
  });
});

void describe("inventoryId", () => {
  void it("is <namespace>_<name>", () => {
    assert.equal(inventoryId("config-management-system", "root-sync"), "config-management-system_root-sync");
  });
});

void describe("resourceId", () => {
  void it("lowercases only the kind and includes the namespace of namespaced objects", () => {
    assert.equal(
      resourceId({ group: "apps", kind: "Deployment", namespace: "shop", name: "Web" }),
      "apps_deployment_shop_Web",
    );
  });

  void it("omits the namespace segment for cluster-scoped objects, leaving the core group empty", () => {
    assert.equal(resourceId({ group: "", kind: "Namespace", name: "shop" }), "_namespace_shop");
    assert.equal(
      resourceId({ group: "rbac.authorization.k8s.io", kind: "ClusterRole", namespace: "", name: "x" }),
      "rbac.authorization.k8s.io_clusterrole_x",
    );
  });
});
