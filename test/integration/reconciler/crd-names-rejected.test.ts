/**
 * A CRD whose names the API server rejects (NamesAccepted False) is Failed to kstatus: Config Sync's applier ends
 * its wait there and skips that CRD's custom resources only (cli-utils' CRD edges), the rest of the commit applied.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  coreApi,
  createRootSync,
  customApi,
  eventually,
  rootSyncNamespace,
  rootSyncStatus,
  startReconciler,
  suffix,
  testNamespace,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";
import { createStatusWidgetCrd } from "../../support/status-widgets.ts";

const json = (obj: unknown): string => JSON.stringify(obj);

test("a CRD whose names conflict with another's ends the wait for it at once: its custom resources are skipped, the rest of the commit applied", async (t) => {
  const name = `cnr-${suffix()}`;
  const namespace = await testNamespace(t, "cnr");
  // widgets.<group> is in the cluster already; the declared gizmos.<group> claims its singular name.
  const group = await createStatusWidgetCrd(t, "cnr");
  const gizmos = `gizmos.${group}`;
  t.after(() =>
    customApi()
      .deleteClusterCustomObject({
        group: "apiextensions.k8s.io",
        version: "v1",
        plural: "customresourcedefinitions",
        name: gizmos,
      })
      .catch(() => undefined),
  );
  const repo = await TestRepo.create(t);
  await repo.write(
    "config/crd.yaml",
    json({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: gizmos },
      spec: {
        group,
        scope: "Namespaced",
        names: { plural: "gizmos", singular: "widget", kind: "Gizmo", listKind: "GizmoList" },
        versions: [
          {
            name: "v1",
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
          },
        ],
      },
    }),
  );
  await repo.write(
    "config/gizmo.yaml",
    json({ apiVersion: `${group}/v1`, kind: "Gizmo", metadata: { name: "g", namespace } }),
  );
  await repo.write(
    "config/cm.yaml",
    json({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "plain", namespace }, data: { a: "1" } }),
  );
  const commit = await repo.commit("a CRD whose singular name is taken");
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });

  // Config Sync's wait reads the CRD Failed at once; a wait for Established would take its whole minute.
  const skip = `dependency apply reconcile failed: _${gizmos}_apiextensions.k8s.io_CustomResourceDefinition`;
  const errors = await eventually(
    async () => {
      const sync = ((await rootSyncStatus(name))["sync"] ?? {}) as JsonObject;
      const found = (sync["errors"] ?? []) as JsonObject[];
      return sync["commit"] === commit && found.length > 0 && found;
    },
    { timeoutMs: 40_000, what: `RootSync ${name} to report errors at ${commit.slice(0, 7)}` },
  );
  assert.equal(errors.length, 1, JSON.stringify(errors));
  assert.ok(
    String(errors[0]?.["errorMessage"]).includes(`skipped apply of Gizmo.${group}, ${namespace}/g: ${skip}`),
    JSON.stringify(errors),
  );
  await coreApi().readNamespacedConfigMap({ namespace, name: "plain" });
});
