import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { apiVersionOf, encodeQuery, groupOf, objectKey, resourcePath, versionOf } from "./paths.ts";
import type { ResourceMapping } from "./types.ts";

const configMaps: ResourceMapping = {
  group: "",
  version: "v1",
  kind: "ConfigMap",
  resource: "configmaps",
  namespaced: true,
  verbs: [],
};
const crds: ResourceMapping = {
  group: "apiextensions.k8s.io",
  version: "v1",
  kind: "CustomResourceDefinition",
  resource: "customresourcedefinitions",
  namespaced: false,
  verbs: [],
};

void describe("apiVersion parts", () => {
  void it("splits core and named groups", () => {
    assert.equal(groupOf("v1"), "");
    assert.equal(versionOf("v1"), "v1");
    assert.equal(groupOf("apps/v1"), "apps");
    assert.equal(versionOf("configsync.gke.io/v1beta1"), "v1beta1");
    assert.equal(apiVersionOf("", "v1"), "v1");
    assert.equal(apiVersionOf("apps", "v1"), "apps/v1");
  });
});

void describe("resourcePath", () => {
  void it("addresses core and named groups, collections, objects and subresources", () => {
    assert.equal(resourcePath(configMaps), "/api/v1/configmaps");
    assert.equal(resourcePath(configMaps, "ns"), "/api/v1/namespaces/ns/configmaps");
    assert.equal(resourcePath(configMaps, "ns", "a"), "/api/v1/namespaces/ns/configmaps/a");
    assert.equal(
      resourcePath(crds, undefined, "x.example.com", "status"),
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x.example.com/status",
    );
  });

  void it("ignores a namespace for cluster-scoped resources", () => {
    assert.equal(resourcePath(crds, "ns", "x"), "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x");
  });

  void it("refuses to address a namespaced object without its namespace", () => {
    assert.throws(() => resourcePath(configMaps, undefined, "a"), /namespace is required/);
    assert.throws(() => resourcePath(configMaps, "ns", ""), /empty name/);
  });

  void it("escapes names that would change the path", () => {
    assert.equal(resourcePath(crds, undefined, "a/b"), "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/a%2Fb");
  });
});

void describe("encodeQuery and objectKey", () => {
  void it("skips undefined values and escapes the rest", () => {
    assert.equal(encodeQuery(undefined), "");
    assert.equal(encodeQuery({ a: undefined }), "");
    assert.equal(
      encodeQuery({ labelSelector: "app in (a,b)", limit: 5, watch: true, x: undefined }),
      "?labelSelector=app%20in%20(a%2Cb)&limit=5&watch=true",
    );
  });

  void it("keys objects by group, kind, namespace and name without collisions", () => {
    assert.equal(objectKey("", "ConfigMap", "ns", "a"), "/ConfigMap/ns/a");
    assert.equal(
      objectKey("rbac.authorization.k8s.io", "ClusterRole", undefined, "x"),
      "rbac.authorization.k8s.io/ClusterRole//x",
    );
    assert.notEqual(objectKey("", "A", "b", "c"), objectKey("", "A", undefined, "b/c"));
  });
});
