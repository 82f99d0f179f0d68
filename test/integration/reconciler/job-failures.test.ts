/**
 * What fails around a pass (reading the RSync, its finalizer, a deletion) is logged with its code: it used
 * to reach only the queue's failure counter. The refusal comes from a real admission policy.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Finalizer } from "@driftless/api";
import { createLogger } from "@driftless/sync";
import {
  createRootSync,
  customApi,
  eventually,
  type JsonObject,
  rootSynced,
  rootSyncNamespace,
  startReconciler,
  statusCode,
  suffix,
  TestRepo,
} from "../../support/index.ts";
import { denyByPolicy } from "../../support/admission-policy.ts";

const rootSyncs = { group: "configsync.gke.io", version: "v1beta1", namespace: rootSyncNamespace, plural: "rootsyncs" };

test("a job that fails before its pass (the reconciler finalizer refused) is logged with the refusal", async (t) => {
  const name = `jobfail-${suffix()}`;
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/cm.yaml",
    JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" }, data: {} }),
  );
  const commit = await repo.commit("one ConfigMap");
  await createRootSync(name, repo);
  const lines: string[] = [];
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { log: createLogger({}, { level: "info", write: (line) => void lines.push(line) }) },
  );
  await rootSynced(name, commit);

  const denial = `policy ${name}: no reconciler finalizer`;
  await denyByPolicy(t, name, {
    rule: { apiGroups: ["configsync.gke.io"], apiVersions: ["*"], operations: ["UPDATE"], resources: ["rootsyncs"] },
    when: `object.metadata.name == '${name}' && has(object.metadata.finalizers) && object.metadata.finalizers.exists(f, f == '${Finalizer.Reconciler}')`,
    message: denial,
  });
  // The reconciler added its finalizer at start; removed by hand, its next job adds it again, which the policy refuses.
  await eventually(
    async () => {
      const live = (await customApi().getNamespacedCustomObject({ ...rootSyncs, name })) as JsonObject;
      const metadata = live["metadata"] as JsonObject;
      try {
        await customApi().replaceNamespacedCustomObject({
          ...rootSyncs,
          name,
          body: { ...live, metadata: { ...metadata, finalizers: [Finalizer.Reconciler] } },
          dryRun: "All",
        });
        return false; // the policy is not in force yet
      } catch (error) {
        if (statusCode(error) === 409) return false;
        await customApi().replaceNamespacedCustomObject({
          ...rootSyncs,
          name,
          body: { ...live, metadata: { ...metadata, finalizers: [] } },
        });
        return true;
      }
    },
    { what: "the policy in force and the reconciler finalizer removed" },
  );

  await reconciler.trigger("drift", "test: a pass after the finalizer was removed");
  const logged = await eventually(
    () => lines.find((line) => line.includes("job failed outside a pass") && line.includes(denial)),
    { what: "the failure logged" },
  );
  assert.match(logged, /"level":"warn"/);
  assert.match(logged, /"code":"KNV/);
});
