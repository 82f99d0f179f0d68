/**
 * A sync's source may not declare the sync itself (Config Sync's KNV1069): nothing of that commit is
 * applied, and the error names the file.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  coreApi,
  createRootSync,
  eventually,
  type JsonObject,
  rootSyncNamespace,
  rootSyncStatus,
  startReconciler,
  statusCode,
  suffix,
  testNamespace,
  TestRepo,
} from "../../support/index.ts";

test("a RootSync whose source declares that RootSync reports KNV1069 and applies nothing of the commit", async (t) => {
  const namespace = await testNamespace(t, "self");
  const name = `self-${suffix()}`;
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/cm.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace }, data: {} }),
  );
  await repo.write(
    "config/self.yaml",
    JSON.stringify({
      apiVersion: "configsync.gke.io/v1beta1",
      kind: "RootSync",
      metadata: { name, namespace: rootSyncNamespace },
      spec: { sourceFormat: "unstructured", git: { repo: "https://example.invalid/other.git", auth: "none" } },
    }),
  );
  const commit = await repo.commit("a ConfigMap, and the RootSync itself");
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });

  const errors = await eventually(
    async () => {
      const source = ((await rootSyncStatus(name))["source"] ?? {}) as { commit?: string; errors?: JsonObject[] };
      return source.commit === commit && (source.errors ?? []).length > 0 ? source.errors : undefined;
    },
    { what: "the RootSync to report its source's error" },
  );
  assert.deepEqual(
    errors?.map((e) => e["code"]),
    ["1069"],
  );
  assert.ok(
    String(errors?.[0]?.["errorMessage"]).includes(
      `RootSync ${rootSyncNamespace}/${name} must not manage itself in its repo`,
    ),
    String(errors?.[0]?.["errorMessage"]),
  );
  await assert.rejects(coreApi().readNamespacedConfigMap({ namespace, name: "c" }), (error: unknown) => {
    assert.equal(statusCode(error), 404);
    return true;
  });
});
