import { test } from "node:test";
import assert from "node:assert/strict";
import { coreApi, customApi, eventually, statusCode, suffix, yamlFixture } from "../../support/index.ts";

test("deleting a namespace really removes it and everything in it (the namespace controller runs)", async () => {
  const core = coreApi();
  const name = `gone-${suffix()}`;
  await core.createNamespace({ body: { metadata: { name } } });
  await core.createNamespacedConfigMap({ namespace: name, body: { metadata: { name: "settings" }, data: { a: "1" } } });
  await customApi().createNamespacedCustomObject({
    group: "configsync.gke.io",
    version: "v1beta1",
    namespace: name,
    plural: "reposyncs",
    body: yamlFixture("configsync-docs/reposync-token.yaml", { NAMESPACE: name }),
  });

  await core.deleteNamespace({ name });
  const phase = (await core.readNamespace({ name })).status?.phase;
  assert.equal(phase, "Terminating");
  await eventually(
    async () => {
      try {
        await core.readNamespace({ name });
        return false;
      } catch (error) {
        return statusCode(error) === 404;
      }
    },
    { timeoutMs: 30_000, what: `namespace ${name} to be deleted` },
  );
});

test("the garbage collector deletes an object whose owner is deleted", async () => {
  const core = coreApi();
  const namespace = `gc-${suffix()}`;
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  try {
    const owner = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: "owner" } } });
    await core.createNamespacedConfigMap({
      namespace,
      body: {
        metadata: {
          name: "dependent",
          ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: owner.metadata?.uid ?? "" }],
        },
      },
    });
    await core.deleteNamespacedConfigMap({ namespace, name: "owner" });
    await eventually(
      async () => {
        try {
          await core.readNamespacedConfigMap({ namespace, name: "dependent" });
          return false;
        } catch (error) {
          return statusCode(error) === 404;
        }
      },
      { timeoutMs: 30_000, what: "the dependent ConfigMap to be collected" },
    );
  } finally {
    await core.deleteNamespace({ name: namespace });
  }
});
