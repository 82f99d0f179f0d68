/**
 * An object someone created by hand, with no manager and no last-applied record, that Git then declares:
 * driftless takes it over as Config Sync does (its e2e TestAdoptClientSideAppliedResource). The labels and
 * annotations already there stay beside the declared ones; the declared spec replaces what was there.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { RbacAuthorizationV1Api } from "@kubernetes/client-node";
import {
  createRootSync,
  kubeConfig,
  rootSynced,
  rootSyncNamespace,
  startReconciler,
  suffix,
  TestRepo,
} from "../../support/index.ts";

test("a ClusterRole created by hand and then declared is adopted: its own labels and annotations stay beside the declared ones, and the declared rules replace its rules", async (t) => {
  const name = `adopt-unmanaged-${suffix()}`;
  const role = `ns-viewer-${suffix()}`;
  const rbac = kubeConfig("admin").makeApiClient(RbacAuthorizationV1Api);
  await rbac.createClusterRole({
    body: {
      metadata: { name: role, labels: { keep: "label" }, annotations: { keep: "annotation" } },
      rules: [{ apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list"] }],
    },
  });
  t.after(() => rbac.deleteClusterRole({ name: role }).then(() => undefined));
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/ns-viewer.yaml",
    JSON.stringify({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: role, labels: { declared: "label" }, annotations: { declared: "annotation" } },
      rules: [{ apiGroups: [""], resources: ["namespaces"], verbs: ["get"] }],
    }),
  );
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, await repo.commit("declare the namespace viewer"));

  const live = await rbac.readClusterRole({ name: role });
  assert.equal(live.metadata?.labels?.["keep"], "label");
  assert.equal(live.metadata?.labels?.["declared"], "label");
  assert.equal(live.metadata?.annotations?.["keep"], "annotation");
  assert.equal(live.metadata?.annotations?.["declared"], "annotation");
  assert.equal(live.metadata?.annotations?.["configsync.gke.io/manager"], `:root_${name}`);
  assert.deepEqual(live.rules?.[0]?.verbs, ["get"]);
});
