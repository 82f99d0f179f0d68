/**
 * A reconciler watches CRDs only once its sync manages a custom resource type (scale issue: no watch for
 * types a sync does not manage); a sync of built-in kinds only, as most tenants' RepoSyncs are, opens none.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createLogger } from "@driftless/sync";
import {
  coreApi,
  createRootSync,
  gadgetCrd,
  rootSynced,
  rootSyncNamespace,
  startReconciler,
  suffix,
  TestRepo,
} from "../../support/index.ts";

const crdWatchLine = "watching CRDs";

test("a sync of built-in kinds opens no CRD watch; its first custom resource type opens one", async (t) => {
  const id = suffix();
  const name = `crd-watch-scope-${id}`;
  const namespace = name;
  const group = `scope${id}.example.com`;
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/ns.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }),
  );
  await repo.write(
    "config/cm.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "plain", namespace }, data: { a: "1" } }),
  );
  const builtIn = await repo.commit("built-in kinds only");
  await createRootSync(name, repo);
  t.after(async () => {
    await coreApi()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined);
  });
  const lines: string[] = [];
  await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { log: createLogger({ test: t.name }, { level: "debug", write: (line) => void lines.push(line) }) },
  );
  await rootSynced(name, builtIn);
  assert.equal(lines.filter((l) => l.includes(crdWatchLine)).length, 0, "a sync of ConfigMaps watched CRDs");

  await repo.write("config/crd.yaml", JSON.stringify(gadgetCrd(group, "map")));
  await repo.write(
    "config/gadget.yaml",
    JSON.stringify({
      apiVersion: `${group}/v1`,
      kind: "Gadget",
      metadata: { name: "g", namespace },
      spec: { items: [{ name: "a", value: "1" }] },
    }),
  );
  const custom = await repo.commit("a CRD and a resource of it");
  await rootSynced(name, custom);
  assert.equal(lines.filter((l) => l.includes(crdWatchLine)).length, 1, "the custom resource type opened no CRD watch");
});
