/**
 * The check that keeps a Namespace whose objects are not all ours, on the real API server: it reads every
 * page of each type, not only the first hundred objects.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { namespaceInUse } from "../../../packages/sync/src/namespace-usage.ts";
import { testNamespace } from "../../support/index.ts";
import { adminClient, configMap, configMaps } from "../kube/support.ts";

const hold = "driftless.test/hold";

test("a Namespace holding one object behind more than a page of objects being deleted is in use", async (t) => {
  const client = await adminClient(t);
  const namespace = await testNamespace(t, "inuse");
  const terminating = Array.from({ length: 101 }, (_, i) => `a-${String(i).padStart(3, "0")}`);
  t.after(async () => {
    for (const name of terminating)
      await client
        .patch(configMaps, namespace, name, { metadata: { finalizers: null } }, "merge")
        .catch(() => undefined);
  });
  for (const name of terminating) {
    const held = configMap(namespace, name);
    held.metadata.finalizers = [hold];
    await client.create(configMaps, held);
    await client.delete(configMaps, namespace, name);
  }
  // Listed after the hundred and one: names sort, and a page is a hundred.
  await client.create(configMaps, configMap(namespace, "zzz-stays"));

  assert.equal(await namespaceInUse(client, namespace, new Set()), true);
});
