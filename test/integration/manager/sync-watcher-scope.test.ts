/**
 * Managers share a cluster by `--sync-selector`, and every reconciler Deployment's events reach each of them.
 * One for a sync another manager serves must not become a job here: out of this manager's scope, the job
 * would let the sync go and tear its reconciler down (a concurrent test's manager did, to another's sync).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { KubeClient, type KubeObject } from "@driftless/kube";
import { createLogger } from "@driftless/sync";
import type { SyncRef } from "@driftless/queue";
import { syncOwnedLabels } from "@driftless/controller";
import { SyncWatcher } from "../../../packages/controller/src/sync-watcher.ts";
import { eventually, suffix, testEnv } from "../../support/index.ts";
import { createNamespace, createSync, managerKubeconfig, Mapping, repoSyncObject, systemNamespace } from "./helpers.ts";

function deployment(name: string, sync: SyncRef): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: systemNamespace, labels: syncOwnedLabels(sync) },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "c", image: "none:0" }] } },
    },
  } as KubeObject;
}

test("a reconciler Deployment's event becomes a job only for a sync this manager serves", async (t) => {
  await managerKubeconfig(); // config-management-system exists from here
  const client = await KubeClient.fromKubeconfig(testEnv().kubeconfig);
  t.after(() => client.close());
  const id = suffix();
  const scope = { id, queuePrefix: "", leaseName: "", stateDir: "", labels: { "driftless.test/watcher": id } };
  const namespace = await createNamespace(t, "watch");
  const git = { repo: "https://example.invalid/config.git", branch: "main" };
  const served: SyncRef = { kind: "RepoSync", namespace, name: "repo-sync" };
  const foreign: SyncRef = { kind: "RepoSync", namespace, name: "other" };
  await createSync(t, repoSyncObject(namespace, served.name, scope, git));
  const other = repoSyncObject(namespace, foreign.name, scope, git);
  await createSync(t, { ...other, metadata: { ...other.metadata, labels: { "driftless.test/watcher": "another" } } });
  const names = { served: `w-served-${id}`, foreign: `w-foreign-${id}` };
  for (const [name, sync] of [
    [names.served, served],
    [names.foreign, foreign],
  ] as const) {
    await client.create(Mapping.Deployment, deployment(name, sync));
    t.after(() => client.delete(Mapping.Deployment, systemNamespace, name).catch(() => undefined));
  }

  const jobs: { sync: SyncRef; trigger: string }[] = [];
  const watcher = new SyncWatcher({
    client,
    syncSelector: `driftless.test/watcher=${id}`,
    watchDeployments: true,
    log: createLogger({}, { write: () => undefined }),
    onSync: (sync, trigger) => void jobs.push({ sync, trigger }),
  });
  t.after(() => watcher.stop());
  watcher.start();
  await watcher.synced();

  // The foreign Deployment changes first: its event comes through the same watch before the served one's.
  for (const name of [names.foreign, names.served])
    await client.patch(Mapping.Deployment, systemNamespace, name, { metadata: { annotations: { poke: id } } }, "merge");
  await eventually(() => jobs.some((j) => j.trigger === "workload" && j.sync.name === served.name), {
    what: "a job for the served sync's Deployment",
  });
  assert.deepEqual(
    jobs.filter((j) => j.sync.name === foreign.name),
    [],
    "a job for a sync another manager serves",
  );
});
