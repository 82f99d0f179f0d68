import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { parseAllDocuments } from "yaml";
import { ManagerMemoryLimit, managerEnvironment, managerNodeFlags } from "@driftless/controller";

const root = join(import.meta.dirname, "..", "..", "..");

interface Container {
  name: string;
  command?: string[];
  env?: { name: string; value?: string }[];
  resources?: { limits?: { memory?: string } };
}

// Without them V8 sizes the manager's heap for the node, not for its container: at 1,000 RepoSyncs
// its young generation alone grew to 64-128 MiB of the 230 MiB it held (docs/design/manager.md).
test("manifests/manager.yaml runs the manager with the Node flags and allocator settings for its memory limit", async () => {
  const deployment = parseAllDocuments(await readFile(join(root, "manifests", "manager.yaml"), "utf8"))
    .map((d) => d.toJS() as { kind?: string; spec?: unknown })
    .find((d) => d.kind === "Deployment") as { spec: { template: { spec: { containers: Container[] } } } } | undefined;
  const manager = deployment?.spec.template.spec.containers.find((c) => c.name === "reconciler-manager");
  assert.ok(manager !== undefined, "no reconciler-manager container");
  const limit = manager.resources?.limits?.memory;
  assert.equal(limit, ManagerMemoryLimit);
  assert.deepEqual(manager.command, ["node", ...managerNodeFlags(limit), "dist/driftless-manager.mjs"]);
  const env = Object.fromEntries((manager.env ?? []).map((e) => [e.name, e.value]));
  for (const [name, value] of Object.entries(managerEnvironment)) assert.equal(env[name], value, name);
});
