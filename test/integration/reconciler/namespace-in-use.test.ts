/**
 * The check that keeps a Namespace whose objects are not all ours, on the real API server: it reads every
 * page of each type, not only the first hundred objects.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeClient } from "@driftless/kube";
import { namespaceInUse } from "../../../packages/sync/src/namespace-usage.ts";
import { testNamespace } from "../../support/index.ts";
import { adminClient, configMap, configMaps, throwawayCrd, widget } from "../kube/support.ts";

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

/** A client that records the paths it asks for and the most requests it had in flight at once. */
function recording(client: KubeClient): { client: KubeClient; paths: string[]; maxInFlight: () => number } {
  const paths: string[] = [];
  let inFlight = 0;
  let most = 0;
  const track = async <T>(path: string, call: () => Promise<T>): Promise<T> => {
    paths.push(path);
    most = Math.max(most, ++inFlight);
    try {
      return await call();
    } finally {
      inFlight--;
    }
  };
  const wrapped = Object.create(client) as KubeClient;
  wrapped.request = (options) => track(options.path, () => client.request(options));
  wrapped.requestRaw = (options) => track(options.path, () => client.requestRaw(options));
  return { client: wrapped, paths, maxInFlight: () => most };
}

test("an empty Namespace is known empty from one discovery round and lists of its types several at a time", async (t) => {
  const admin = await adminClient(t);
  const widgets = await throwawayCrd(t, admin);
  const namespace = await testNamespace(t, "inuse");
  const { client, paths, maxInFlight } = recording(admin);

  assert.equal(await namespaceInUse(client, namespace, new Set()), false);
  // A group-version read one by one is a request per group: hundreds on a cluster with many CRDs.
  const discoveryReads = paths.filter((path) => !path.includes("/namespaces/"));
  assert.deepEqual(discoveryReads.sort(), ["/api", "/apis"]);
  const widgetList = `/apis/${widgets.group}/v1/namespaces/${namespace}/widgets`;
  assert.ok(paths.includes(widgetList), "the custom resource type was not listed");
  assert.ok(maxInFlight() > 1, "the types were listed one after another");

  await admin.create(widgets, widget(widgets, namespace, "only-one", 1));
  assert.equal(await namespaceInUse(admin, namespace, new Set()), true, "a custom resource alone holds the Namespace");
});
