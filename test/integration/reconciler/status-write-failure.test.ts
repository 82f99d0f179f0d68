/**
 * A pass whose last status write fails is not complete: the next poll runs in full and reports the
 * commit, instead of skipping as unchanged until the resync (5 min). The refusal comes from a real
 * admission policy on the RootSync's status.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { KubeClient, type KubeObject, type ResourceMapping } from "@driftless/kube";
import {
  coreApi,
  createRootSync,
  eventually,
  rootSynced,
  rootSyncNamespace,
  rootSyncStatus,
  startReconciler,
  suffix,
  testEnv,
  testNamespace,
  TestRepo,
} from "../../support/index.ts";
import { denyByPolicy } from "../../support/admission-policy.ts";

const rootSyncs: ResourceMapping = {
  group: "configsync.gke.io",
  version: "v1beta1",
  kind: "RootSync",
  resource: "rootsyncs",
  namespaced: true,
  verbs: [],
};

const configMap = (namespace: string, round: string): string =>
  JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace }, data: { round } });

test("a commit applied while its status write was refused is reported by the next poll, not at the resync", async (t) => {
  const namespace = await testNamespace(t, "stw");
  const name = `stw-${suffix()}`;
  const repo = await TestRepo.create(t);
  await repo.write("config/c.yaml", configMap(namespace, "1"));
  const first = await repo.commit("round 1");
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, first);

  // Refuses the write that reports another commit as synced; the pass's other writes go through.
  const lift = await denyByPolicy(t, `deny-${name}`, {
    rule: {
      apiGroups: ["configsync.gke.io"],
      apiVersions: ["*"],
      operations: ["UPDATE"],
      resources: ["rootsyncs/status"],
    },
    when: `object.metadata.name == '${name}' && has(object.status.lastSyncedCommit) && object.status.lastSyncedCommit != '${first}'`,
    message: `status of ${name} refused by the test`,
  });
  const client = await KubeClient.fromKubeconfig(testEnv().kubeconfig);
  await eventually(
    async () => {
      const live = (await client.get(rootSyncs, rootSyncNamespace, name)) as KubeObject & { status?: object };
      const probe = { ...live, status: { ...live.status, lastSyncedCommit: "probe" } };
      try {
        await client.replaceStatus(rootSyncs, probe, { dryRun: true });
        return false;
      } catch {
        return true;
      }
    },
    { what: "the policy in force" },
  );

  await repo.write("config/c.yaml", configMap(namespace, "2"));
  const second = await repo.commit("round 2");
  // The pass applies the commit, then cannot report it.
  await eventually(
    async () => (await coreApi().readNamespacedConfigMap({ namespace, name: "c" })).data?.["round"] === "2",
    { what: "round 2 applied" },
  );
  assert.equal((await rootSyncStatus(name))["lastSyncedCommit"], first);

  await lift();
  // Well inside the 5-minute resync, which is all an unchanged poll would wait for.
  await rootSynced(name, second);
});
