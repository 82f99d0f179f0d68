/**
 * A commit that keeps failing the same way is retried at every poll, and each retry must cost the API
 * server nothing: status already says what failed, so no status write and no Event, however long the
 * commit stays broken (hundreds of syncs may sit in that state on one cluster).
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import {
  coreApi,
  createRootSync,
  customApi,
  eventually,
  rootSyncNamespace,
  rootSyncs,
  rootSyncStatus,
  startReconciler,
  suffix,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";

/**
 * Three retries of a commit that fails with `reason` leave the RootSync (its resourceVersion) and its
 * Events as they were. With `onlyStatus`, the retries may still send the refused object again (the
 * apply is retried: a webhook or CRD may have changed); otherwise they send no request at all.
 */
async function retriesWriteNothing(
  t: TestContext,
  files: Record<string, string>,
  reason: string,
  onlyStatus = false,
): Promise<void> {
  const name = `retry-${suffix()}`;
  const repo = await TestRepo.create(t);
  for (const [path, text] of Object.entries(files)) await repo.write(path, text);
  const commit = await repo.commit("a commit that cannot sync");
  await createRootSync(name, repo);
  const reconciler = await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  const syncing = async (): Promise<JsonObject | undefined> =>
    ((await rootSyncStatus(name))["conditions"] as JsonObject[] | undefined)?.find((c) => c["type"] === "Syncing");
  await eventually(
    async () => {
      const condition = await syncing();
      return condition?.["status"] === "False" && condition["reason"] === reason && condition["commit"] === commit;
    },
    { what: `the ${reason} failure reported` },
  );
  const reported = await syncing();
  const counted = reconciler.passCount;
  // Two retries first: the watch of the RSync has then delivered the failure's own status write.
  await eventually(() => reconciler.passCount >= counted + 2, { timeoutMs: 30_000, what: "two retries" });

  const resourceVersion = await rootSyncVersion(name);
  const events = await eventNames(name);
  const [writes, updates, gets] = [
    reconciler.client.requests.writes(),
    reconciler.client.requests.count("update"),
    reconciler.client.requests.count("get"),
  ];
  const base = reconciler.passCount;
  await eventually(() => reconciler.passCount >= base + 3, { timeoutMs: 30_000, what: "three retries" });
  assert.equal(await rootSyncVersion(name), resourceVersion, "a retry wrote the RootSync");
  assert.deepEqual(await eventNames(name), events, "a retry recorded an Event");
  if (onlyStatus) assert.equal(reconciler.client.requests.count("update") - updates, 0, "a retry updated something");
  else assert.equal(reconciler.client.requests.writes() - writes, 0, "a retry wrote");
  // Nor read: the RSync comes from its watch, and its status already says what the retry found.
  if (!onlyStatus) assert.equal(reconciler.client.requests.count("get") - gets, 0, "a retry read from the API server");
  assert.deepEqual(await syncing(), reported, "the failure is still reported as it was");
}

async function rootSyncVersion(name: string): Promise<string | undefined> {
  const sync = (await customApi().getNamespacedCustomObject({ ...rootSyncs, name })) as JsonObject;
  return (sync["metadata"] as JsonObject | undefined)?.["resourceVersion"] as string | undefined;
}

async function eventNames(name: string): Promise<string[]> {
  const list = await coreApi().listNamespacedEvent({
    namespace: rootSyncNamespace,
    fieldSelector: `involvedObject.name=${name}`,
  });
  return list.items.map((e) => e.metadata?.name ?? "").sort();
}

test("retries of a commit whose source cannot be read write no status and record no Event", (t) =>
  retriesWriteNothing(t, { "config/a.yaml": "kind: [unclosed\n" }, "Source"));

test("retries of a commit whose kustomization cannot be rendered write no status and record no Event", (t) =>
  retriesWriteNothing(t, { "config/kustomization.yaml": "resources:\n- missing.yaml\n" }, "Rendering"));

test("retries of a commit the API server refuses an object of write no status and record no Event", (t) => {
  const namespace = `retry-${suffix()}`;
  t.after(() =>
    coreApi()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined),
  );
  const service = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", namespace },
    spec: { ports: [{ port: 99_999 }] }, // the API server allows 1-65535
  };
  return retriesWriteNothing(
    t,
    {
      "config/ns.yaml": JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }),
      "config/service.yaml": JSON.stringify(service),
    },
    "Sync",
    true,
  );
});
