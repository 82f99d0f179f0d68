import { test } from "node:test";
import assert from "node:assert/strict";
import type { DesiredObject } from "@driftless/applier";
import { deletesAllNamespaces } from "./namespace-safeguard.ts";

const namespace = (name: string) => ({ group: "", kind: "Namespace", name });
const declared = (id: DesiredObject["id"]): DesiredObject => ({
  id,
  apiVersion: "v1",
  object: {},
  sourcePath: "x.yaml",
  sourceHash: "abc",
  dependsOn: [],
});
const role = { group: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "r" };

test("refuses a declaration keeping none of two or more managed Namespaces, whatever else it declares", () => {
  const refused = deletesAllNamespaces([namespace("b"), namespace("a"), role], [declared(role)]);
  assert.equal(refused?.code, "KNV2006");
  assert.match(refused?.message ?? "", /^New commit would delete all Namespaces \[a b\]\./);
});

test("lets through one Namespace going, all but one going, or any Namespace still declared", () => {
  assert.equal(deletesAllNamespaces([namespace("a"), role], [declared(role)]), undefined);
  assert.equal(deletesAllNamespaces([namespace("a"), namespace("b")], [declared(namespace("b"))]), undefined);
  assert.equal(deletesAllNamespaces([namespace("a"), namespace("b")], [declared(namespace("c"))]), undefined);
  assert.equal(deletesAllNamespaces([role], []), undefined);
});
