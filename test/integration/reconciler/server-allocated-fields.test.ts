/**
 * Fields the cluster fills in and Git never declares stay as the cluster set them, as in Config Sync's
 * TestPreserveGeneratedServiceFields and TestPreserveGeneratedClusterRoleFields: a NodePort Service's
 * allocated clusterIP and nodePort, and the rules the aggregation controller writes into a ClusterRole that
 * declares only an aggregationRule. Idle passes write nothing, and a declared change keeps them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { RbacAuthorizationV1Api, type V1ClusterRole } from "@kubernetes/client-node";
import {
  coreApi,
  createRootSync,
  customApi,
  eventually,
  kubeConfig,
  rootSynced,
  rootSyncNamespace,
  rootSyncs,
  startReconciler,
  suffix,
  testNamespace,
  TestRepo,
} from "../../support/index.ts";

const rbac = () => kubeConfig().makeApiClient(RbacAuthorizationV1Api);

/** The managedFields entry of whoever wrote a ClusterRole's rules (the aggregation controller). */
const rulesWriter = (role: V1ClusterRole) =>
  role.metadata?.managedFields?.find((entry) => JSON.stringify(entry.fieldsV1 ?? {}).includes('"f:rules"'));

test("a NodePort Service's allocated clusterIP and nodePort and an aggregated ClusterRole's rules survive idle passes and a declared change", async (t) => {
  const namespace = await testNamespace(t, "allocated");
  const id = suffix();
  const selectorLabel = `allocated-${id}`;
  const [viewerA, viewerB, aggregate] = [`viewer-a-${id}`, `viewer-b-${id}`, `aggregate-${id}`];
  t.after(async () => {
    for (const name of [aggregate, viewerA, viewerB])
      await rbac()
        .deleteClusterRole({ name })
        .catch(() => undefined);
  });
  const viewer = (name: string, resources: string[]) =>
    JSON.stringify({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name, labels: { [selectorLabel]: "viewer" } },
      rules: [{ apiGroups: [""], resources, verbs: ["get", "list"] }],
    });
  const aggregated = (labels: Record<string, string>) =>
    JSON.stringify({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: aggregate, labels },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [selectorLabel]: "viewer" } }] },
    });
  const service = (targetPort: number) =>
    JSON.stringify({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web", namespace },
      spec: {
        type: "NodePort",
        sessionAffinity: "ClientIP",
        selector: { app: "web" },
        ports: [{ name: "http", protocol: "TCP", port: 80, targetPort }],
      },
    });

  const name = `allocated-${id}`;
  t.after(() =>
    customApi()
      .deleteNamespacedCustomObject({ ...rootSyncs, name })
      .catch(() => undefined),
  );
  const repo = await TestRepo.create(t);
  await repo.write("config/viewer-a.yaml", viewer(viewerA, ["namespaces"]));
  await repo.write("config/viewer-b.yaml", viewer(viewerB, ["configmaps"]));
  await repo.write("config/aggregate.yaml", aggregated({}));
  await repo.write("config/service.yaml", service(9376));
  const first = await repo.commit("a NodePort Service and an aggregated ClusterRole");
  await createRootSync(name, repo);
  // resyncPeriodMs 0: every poll is a full pass, each matching every object against the live one.
  const reconciler = await startReconciler(
    t,
    { kind: "RootSync", namespace: rootSyncNamespace, name },
    { resyncPeriodMs: 0 },
  );
  await rootSynced(name, first);

  const filled = await eventually(
    async () => {
      const role = await rbac().readClusterRole({ name: aggregate });
      return (role.rules ?? []).length === 2 ? role : undefined;
    },
    { what: "the aggregation controller to fill in both viewers' rules" },
  );
  assert.ok(rulesWriter(filled) !== undefined, "the aggregation controller's write is recorded");
  const allocated = await coreApi().readNamespacedService({ namespace, name: "web" });
  const nodePort = allocated.spec?.ports?.[0]?.nodePort;
  const clusterIP = allocated.spec?.clusterIP;
  assert.ok(nodePort !== undefined && clusterIP !== undefined, "the Service got a nodePort and a clusterIP");

  const writesBefore = reconciler.client.requests.writes();
  const passes = reconciler.passCount;
  await eventually(() => reconciler.passCount >= passes + 3, { what: "three full passes" });
  assert.equal(reconciler.client.requests.writes() - writesBefore, 0, "an idle pass wrote");

  await repo.write("config/service.yaml", service(9377));
  await repo.write("config/aggregate.yaml", aggregated({ "meaningless-label": "exists" }));
  await rootSynced(name, await repo.commit("a new targetPort and a label on the aggregate"));
  const changed = await coreApi().readNamespacedService({ namespace, name: "web" });
  assert.equal(changed.spec?.ports?.[0]?.targetPort, 9377);
  assert.equal(changed.spec?.ports?.[0]?.nodePort, nodePort);
  assert.equal(changed.spec?.clusterIP, clusterIP);
  const role = await rbac().readClusterRole({ name: aggregate });
  assert.equal(role.metadata?.labels?.["meaningless-label"], "exists");
  assert.deepEqual(role.rules, filled.rules);
  // Rules cleared and filled in again would look the same; the controller's own write record shows it did not write again.
  assert.deepEqual(rulesWriter(role), rulesWriter(filled));
});
