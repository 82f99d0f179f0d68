/**
 * The manager's Deployment in manifests/manager.yaml reads this cluster's name where Config Sync's
 * reconciler-manager reads it: `CLUSTER_NAME` in the optional ConfigMap `reconciler-manager`, which
 * Config Sync's own tests patch to rename a cluster. A literal env entry would override the ConfigMap.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { findRepoRoot } from "@driftless/local-cluster";

interface Container {
  readonly name: string;
  readonly env?: { readonly name: string }[];
  readonly envFrom?: { readonly configMapRef?: { readonly name: string; readonly optional?: boolean } }[];
}

test("the manager reads CLUSTER_NAME from the optional reconciler-manager ConfigMap, as Config Sync's does", async () => {
  const text = await readFile(join(findRepoRoot(), "manifests", "manager.yaml"), "utf8");
  const deployment = parseAllDocuments(text)
    .map((d) => d.toJS() as { kind?: string; spec?: { template: { spec: { containers: Container[] } } } } | null)
    .find((o) => o?.kind === "Deployment");
  const containers = deployment?.spec?.template.spec.containers ?? [];
  assert.equal(containers.length, 1);
  const [manager] = containers;
  assert.deepEqual(manager?.envFrom, [{ configMapRef: { name: "reconciler-manager", optional: true } }]);
  assert.equal(
    manager?.env?.find((e) => e.name === "CLUSTER_NAME"),
    undefined,
    "a literal CLUSTER_NAME would override the ConfigMap's",
  );
});
