/**
 * A commit the all-Namespaces failsafe refuses (KNV2006) is still counted in declared_resources under its
 * own commit, as Config Sync records that gauge after parsing and before the failsafe (its e2e
 * TestDontDeleteAllNamespaces expects the refused Namespaces gone from the metric, not from the cluster).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { RbacAuthorizationV1Api } from "@kubernetes/client-node";
import {
  coreApi,
  createRootSync,
  eventually,
  kubeConfig,
  rootSynced,
  rootSyncNamespace,
  startReconciler,
  suffix,
  syncErrorsAt,
  TestRepo,
} from "../../support/index.ts";
import { scrape, valueOf } from "../monitoring/scrape.ts";

test("a commit refused for deleting every Namespace (KNV2006) sets declared_resources to what it declares, under its commit", async (t) => {
  const id = suffix();
  const name = `failsafe-metrics-${id}`;
  const namespaces = [`fsm-a-${id}`, `fsm-b-${id}`];
  t.after(() =>
    Promise.all(
      namespaces.map((n) =>
        coreApi()
          .deleteNamespace({ name: n })
          .catch(() => undefined),
      ),
    ),
  );
  const rbac = kubeConfig("admin").makeApiClient(RbacAuthorizationV1Api);
  t.after(() => rbac.deleteClusterRole({ name }).catch(() => undefined));
  const repo = await TestRepo.create(t);
  for (const n of namespaces)
    await repo.write(
      `config/${n}.yaml`,
      JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: n } }),
    );
  await repo.write(
    "config/role.yaml",
    JSON.stringify({ apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name }, rules: [] }),
  );
  const first = await repo.commit("two namespaces and a cluster role");
  await createRootSync(name, repo);
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { metricsPort: 0 },
  );
  const url = reconciler.metricsUrl;
  assert.ok(url !== undefined);
  await rootSynced(name, first);

  for (const n of namespaces) await repo.remove(`config/${n}.yaml`);
  const refused = await repo.commit("remove both namespaces");
  const errors = await syncErrorsAt(name, refused);
  assert.ok(
    errors.some((e) => e["code"] === "2006"),
    JSON.stringify(errors),
  );
  const declared = await eventually(
    async () => valueOf(await scrape(`${url}/metrics`), "config_sync_declared_resources", { commit: refused }),
    { timeoutMs: 15_000, what: "declared_resources of the refused commit" },
  );
  assert.equal(declared, 1, "the refused commit declares the ClusterRole alone");
  const previous = valueOf(await scrape(`${url}/metrics`), "config_sync_declared_resources", { commit: first });
  assert.ok(previous === undefined || previous === 0, `the synced commit still counts ${String(previous)}`);
});
