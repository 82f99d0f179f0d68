import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { parseAllDocuments } from "yaml";

const root = join(import.meta.dirname, "..", "..", "..");
const read = (path: string): Promise<string> => readFile(join(root, path), "utf8");

// Without a cluster name every cluster-selected object is left out, without an error: the
// installation must say how to set it, where an installer looks.
test("the installation names the cluster: --cluster-name / CLUSTER_NAME in the README, the manager's flag table, and the reconciler-manager ConfigMap manifests/manager.yaml reads", async () => {
  const readme = await read("README.md");
  assert.match(readme, /^\|[^\n]*\| `--cluster-name` \/ `CLUSTER_NAME` \|[^\n]*$/m);
  const flags = await read("docs/design/manager.md");
  assert.match(flags, /^\| `--cluster-name NAME`[^\n]*\| `CLUSTER_NAME` \|[^\n]*$/m);
  const deployment = parseAllDocuments(await read("manifests/manager.yaml"))
    .map((d) => d.toJS() as { kind?: string; spec?: unknown })
    .find((d) => d.kind === "Deployment") as { spec: { template: { spec: { containers: Container[] } } } } | undefined;
  const manager = deployment?.spec.template.spec.containers.find((c) => c.name === "reconciler-manager");
  // Where Config Sync's reconciler-manager reads it (its tests rename a cluster there); a literal env entry
  // would override the ConfigMap's.
  assert.deepEqual(manager?.envFrom, [{ configMapRef: { name: "reconciler-manager", optional: true } }]);
  assert.equal(
    manager?.env?.find((e) => e.name === "CLUSTER_NAME"),
    undefined,
    "a literal CLUSTER_NAME in manifests/manager.yaml would override the ConfigMap's",
  );
});

interface Container {
  readonly name: string;
  readonly env?: { readonly name: string }[];
  readonly envFrom?: { readonly configMapRef?: { readonly name: string; readonly optional?: boolean } }[];
}
