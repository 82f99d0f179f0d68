/**
 * Two reconcilers of one sync run side by side when a frozen manager's children still run beside its
 * successor's (process mode). Only one of them runs the deletion's job (the sync's queue); the other
 * must see the deletion by its own watch and correct nothing, or it re-manages what the job releases.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";
import { KubeClient } from "@driftless/kube";
import { rsyncMapping } from "@driftless/sync";
import {
  coreApi,
  createRepoSync,
  eventually,
  repoSyncSyncedTo,
  startReconciler,
  suffix,
  testEnv,
  testNamespace,
  TestRepo,
} from "../../support/index.ts";

const names = ["cm-0", "cm-1", "cm-2", "cm-3", "cm-4"];
const managed = "configmanagement.gke.io/managed";

/** The ConfigMaps that still say a sync manages them. */
async function stillManaged(namespace: string): Promise<string[]> {
  const list = await coreApi().listNamespacedConfigMap({ namespace });
  return list.items
    .filter((cm) => names.includes(cm.metadata?.name ?? "") && cm.metadata?.annotations?.[managed] === "enabled")
    .map((cm) => cm.metadata?.name ?? "");
}

test("a reconciler that sees its sync deleted by another reconciler of the sync corrects nothing: Orphan releases every object, for good", async (t) => {
  const namespace = await testNamespace(t, "twin");
  const repo = await TestRepo.create(t);
  for (const name of names)
    await repo.write(
      `config/${name}.yaml`,
      JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { v: "1" } }),
    );
  const commit = await repo.commit("five config maps");
  await createRepoSync(namespace, repo, {
    annotations: { "configsync.gke.io/deletion-propagation-policy": "Orphan" },
  });
  const identity = { kind: "RepoSync", namespace, name: "repo-sync" } as const;
  const queuePrefix = `t${suffix()}`;
  const first = await startReconciler(t, identity, { queuePrefix });
  const second = await startReconciler(t, identity, { queuePrefix });
  await repoSyncSyncedTo(namespace, commit);
  // Both guard the objects: each has run a pass (the queue hands polls to either).
  await eventually(() => first.passCount > 0 && second.passCount > 0, { what: "a pass in each reconciler" });
  assert.deepEqual(await stillManaged(namespace), names);

  const admin = await KubeClient.fromKubeconfig(testEnv().kubeconfig);
  t.after(() => admin.close());
  await admin.delete(rsyncMapping("RepoSync"), namespace, "repo-sync");
  await eventually(async () => (await admin.get(rsyncMapping("RepoSync"), namespace, "repo-sync")) === undefined, {
    timeoutMs: 30_000,
    what: "the RepoSync gone once its finalizer released the objects",
  });
  // Released and staying so: the reconciler that did not run the job re-applied them within 100 ms.
  for (let checks = 0; checks < 15; checks++) {
    assert.deepEqual(await stillManaged(namespace), [], `managed again ${checks * 200} ms after the RepoSync went`);
    await delay(200);
  }
});
