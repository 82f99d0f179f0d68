/**
 * A RepoSync may not declare a NamespaceSelector (cluster-scoped). With `mode: dynamic` one used to make
 * the reconciler list the cluster's Namespaces, which a RepoSync's reconciler may not do, and wait for that
 * list for ever: the pass never ended and no later commit was applied. Run by the manager, so the
 * reconciler has its own, namespace-bound, rights.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { eventually, TestRepo } from "../../support/index.ts";
import { grantRepoSyncReconciler } from "../../support/rbac.ts";
import { configMap, createNamespace, createSync, getSync, repoSyncObject, startManager, synced } from "./helpers.ts";

type SourceError = { readonly code?: string; readonly errorMessage?: string };

test("a RepoSync declaring a dynamic NamespaceSelector reports it on its status, and syncs the next commit", async (t) => {
  const manager = await startManager(t);
  const namespace = await createNamespace(t, "nssel");
  await grantRepoSyncReconciler(namespace);
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("a", undefined, { v: "1" }));
  await repo.write(
    "selector.yaml",
    JSON.stringify({
      apiVersion: "configmanagement.gke.io/v1",
      kind: "NamespaceSelector",
      metadata: { name: "everywhere" },
      spec: { mode: "dynamic", selector: { matchLabels: { team: "a" } } },
    }),
  );
  const commit = await repo.commit("a ConfigMap and a dynamic NamespaceSelector");
  await createSync(t, repoSyncObject(namespace, "repo-sync", manager.scope, { repo: repo.url, branch: repo.branch }));

  const errors = await eventually(
    async () => {
      const status = ((await getSync("RepoSync", namespace, "repo-sync"))?.["status"] ?? {}) as Record<string, unknown>;
      const source = (status["source"] ?? {}) as { commit?: string; errors?: SourceError[] };
      return source.commit === commit && (source.errors ?? []).length > 0 ? source.errors : undefined;
    },
    { timeoutMs: 60_000, what: "the RepoSync to report its source's error" },
  );
  // Refused as a kind this sync cannot declare, like any cluster-scoped object in a RepoSync, in Config Sync's words.
  assert.ok(
    errors?.some((e) =>
      e.errorMessage?.startsWith(
        "KNV1058: Resources in namespace Repos must be Namespace-scoped type, but objects of type " +
          "configmanagement.gke.io/v1, Kind=NamespaceSelector are Cluster-scoped. Move everywhere to the Root repo." +
          "\n\nsource: selector.yaml\nmetadata.name: everywhere\n",
      ),
    ),
    JSON.stringify(errors),
  );

  // The reconciler is not stuck: the next commit, without the selector, syncs.
  await repo.remove("selector.yaml");
  await synced("RepoSync", namespace, "repo-sync", await repo.commit("no selector"));
});
