import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { implicitNamespace, implicitNamespaces } from "./implicit-namespaces.ts";
import { readSource } from "./read-source.ts";
import { configMap, fakeDiscovery, withTree } from "./testing.ts";

void describe("implicit namespaces", () => {
  void it("lists the namespaces objects use that the source does not declare, once each, never config-management-system", async () => {
    const source = await withTree(
      {
        "a.yaml": configMap("a", "undeclared"),
        "b.yaml": configMap("b", "undeclared"),
        "c.yaml": configMap("c", "declared"),
        "d.yaml": configMap("d", "config-management-system"),
        "e.yaml": configMap("e"),
        "ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: declared}\n",
      },
      (dir) => readSource(dir, { scope: { kind: "RootSync" }, kinds: fakeDiscovery() }),
    );
    assert.ok(source.complete);
    assert.deepEqual(implicitNamespaces(source.objects), ["undeclared", "default"]);
  });

  void it("declares an implicit Namespace with the detach lifecycle annotation, so pruning only lets go of it", () => {
    const ns = implicitNamespace("team");
    assert.deepEqual(ns.id, { group: "", kind: "Namespace", namespace: "", name: "team" });
    assert.deepEqual(ns.raw, {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "team", annotations: { "client.lifecycle.config.k8s.io/deletion": "detach" } },
    });
    assert.equal(ns.resource, "namespaces");
    assert.equal(ns.namespaced, false);
  });
});
