/**
 * Config Sync's TestReconcileFinalizerReconcileTimeout: a RootSync removed from its parent's source finalizes
 * (Foreground) and, while a finalizer holds the Namespace it manages, reports ReconcilerFinalizerFailure naming
 * that Namespace and stays; once the finalizer goes, both go.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { eventually, suffix, TestRepo } from "../../support/index.ts";
import {
  admin,
  conditionOf,
  createSync,
  getObject,
  getSync,
  Mapping,
  rootSyncObject,
  startManager,
  synced,
  systemNamespace,
} from "./helpers.ts";

const hold = "driftless.test/hold";

test("a nested RootSync removed from Git while a finalizer holds its Namespace reports ReconcilerFinalizerFailure naming it, and goes with it once released", async (t) => {
  const manager = await startManager(t);
  const client = await admin();
  const id = suffix();
  const namespace = `managed-${id}`;
  const [root, nested] = [`root-${id}`, `nested-${id}`];
  t.after(async () => {
    await client
      .patch(Mapping.Namespace, undefined, namespace, { metadata: { finalizers: null } }, "merge")
      .catch(() => undefined);
    await client.delete(Mapping.Namespace, undefined, namespace).catch(() => undefined);
  });
  const repo = await TestRepo.create(t);
  const git = (dir: string) => ({ repo: repo.url, branch: repo.branch, dir });
  await repo.write(
    "root/nested.yaml",
    JSON.stringify(
      rootSyncObject(nested, manager.scope, git("nested"), {
        "configsync.gke.io/deletion-propagation-policy": "Foreground",
      }),
    ),
  );
  await repo.write(
    "root/keep.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: `keep-${id}` } }),
  );
  t.after(() => client.delete(Mapping.Namespace, undefined, `keep-${id}`).catch(() => undefined));
  await repo.write(
    "nested/ns.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }),
  );
  const commit = await repo.commit("a nested RootSync managing a Namespace");
  await createSync(t, rootSyncObject(root, manager.scope, git("root")));
  await synced("RootSync", systemNamespace, nested, commit, 120_000);
  await client.patch(Mapping.Namespace, undefined, namespace, { metadata: { finalizers: [hold] } }, "merge");

  await repo.remove("root/nested.yaml");
  await repo.commit("remove the nested RootSync");
  const failure = await eventually(
    async () => {
      const condition = conditionOf(await getSync("RootSync", systemNamespace, nested), "ReconcilerFinalizerFailure");
      return condition?.status === "True" ? condition : undefined;
    },
    { timeoutMs: 120_000, what: "ReconcilerFinalizerFailure on the nested RootSync" },
  );
  assert.equal(failure.reason, "DestroyFailure");
  assert.equal(failure.message, "Failed to delete managed resource objects");
  const errors = (failure as { errors?: { code: string; errorMessage: string }[] }).errors ?? [];
  assert.deepEqual(
    errors.map((e) => [e.code, e.errorMessage]),
    [
      [
        "2009",
        `KNV2009: failed to wait for Namespace, /${namespace}: reconcile timeout\n\nFor more information, see https://g.co/cloud/acm-errors#knv2009`,
      ],
    ],
  );
  assert.ok(await getSync("RootSync", systemNamespace, nested), "the nested RootSync went before its Namespace");
  assert.ok(await getObject(Mapping.Namespace, undefined, namespace), "the Namespace is gone despite its finalizer");

  await client.patch(Mapping.Namespace, undefined, namespace, { metadata: { finalizers: null } }, "merge");
  await eventually(
    async () =>
      (await getSync("RootSync", systemNamespace, nested)) === undefined &&
      (await getObject(Mapping.Namespace, undefined, namespace)) === undefined,
    { timeoutMs: 120_000, what: "the nested RootSync and its Namespace gone" },
  );
});
