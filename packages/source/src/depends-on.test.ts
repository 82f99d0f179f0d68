import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseDependsOn } from "./depends-on.ts";
import { objectKey } from "./object-id.ts";

void describe("parseDependsOn", () => {
  void it("reads namespaced and cluster-scoped references, core group empty, spaces around commas ignored", () => {
    assert.deepEqual(parseDependsOn("apps/namespaces/shop/Deployment/web , /Namespace/shop"), {
      ok: true,
      refs: [
        { group: "apps", kind: "Deployment", namespace: "shop", name: "web" },
        { group: "", kind: "Namespace", namespace: "", name: "shop" },
      ],
    });
  });

  void it("rejects references of the wrong shape", () => {
    const cases: [string, RegExp][] = [
      ["", /must be group\/Kind\/name/],
      ["apps/Deployment", /must be group\/Kind\/name/],
      ["a/b/c/d", /must be/],
      ["apps/namespace/shop/Deployment/web", /second must be "namespaces"/],
      ["apps/namespaces//Deployment/web", /empty namespace/],
      ["apps//web", /empty kind/],
      ["apps/Deployment/", /empty name/],
      ["/Namespace/a,", /must be/],
    ];
    for (const [value, expected] of cases) {
      const parsed = parseDependsOn(value);
      assert.ok(!parsed.ok, value);
      assert.match(parsed.problem, expected, value);
    }
  });

  void it("round-trips through objectKey, which writes the same syntax", () => {
    for (const text of [
      "apps/namespaces/shop/Deployment/web",
      "/Namespace/shop",
      "rbac.authorization.k8s.io/ClusterRole/x",
    ]) {
      const parsed = parseDependsOn(text);
      assert.ok(parsed.ok);
      assert.equal(parsed.refs.map(objectKey).join(","), text);
    }
  });
});
