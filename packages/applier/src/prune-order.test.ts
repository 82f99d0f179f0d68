import { test } from "node:test";
import assert from "node:assert/strict";
import { dependentsFirst, DependentHold, DependentNotDeletedError, type PruneNode } from "./prune-order.ts";

const cm = (name: string, ...dependsOn: string[]): PruneNode => ({
  id: { group: "", kind: "ConfigMap", namespace: "shop", name },
  dependsOn: dependsOn.map((d) => ({ group: "", kind: "ConfigMap", namespace: "shop", name: d })),
});
const names = (waves: PruneNode[][]): string[][] => waves.map((w) => w.map((n) => n.id.name));

test("without depends-on between candidates, every candidate is in one wave", () => {
  assert.deepEqual(names(dependentsFirst([cm("a"), cm("b", "elsewhere")])), [["a", "b"]]);
  assert.deepEqual(dependentsFirst([]), []);
});

test("a dependent goes in an earlier wave than each of its dependencies, a chain one wave per link", () => {
  // repo-sync depends on the role binding, which depends on the role; unrelated goes at once.
  const waves = dependentsFirst([
    cm("role"),
    cm("binding", "role"),
    cm("repo-sync", "binding", "role"),
    cm("unrelated"),
  ]);
  assert.deepEqual(names(waves), [["repo-sync", "unrelated"], ["binding"], ["role"]]);
});

test("a cycle in live annotations is cut, not followed forever", () => {
  const waves = dependentsFirst([cm("a", "b"), cm("b", "a")]);
  assert.deepEqual(names(waves).flat().sort(), ["a", "b"]);
});

test("a held dependency is reported in cli-utils' words", () => {
  const error = new DependentNotDeletedError(cm("binding").id, cm("repo-sync").id, DependentHold.Timeout);
  assert.equal(
    error.message,
    "skipped delete of ConfigMap, shop/binding: dependent delete reconcile timeout: shop_repo-sync__ConfigMap",
  );
  assert.equal(error.code, "KNV2009");
});
