/**
 * A CRD created again with another scope under a reconciler that may not watch CRDs (a RootSync restricted by
 * override.roleRefs): nothing tells its RestMapper, so only what the API server answers can.
 */
import { test } from "node:test";
import {
  createRootSync,
  customApi,
  eventually,
  rootSynced,
  rootSyncNamespace,
  rootSyncs,
  rootSyncStatus,
  startReconciler,
  suffix,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";
import { limitedKubeconfig } from "../../support/limited-identity.ts";
import { startApiProxy } from "../fault/api-proxy.ts";
import { adminClient, crdEstablished, crds } from "../kube/support.ts";
import { anvilCrd, anvils } from "./anvil-crd.ts";

test("a RootSync refused the CRD watch applies a custom resource declared without namespace as cluster-scoped once its CRD is created again cluster-scoped, where it kept the old scope and failed with 404 until a restart", async (t) => {
  const group = `crdscope${suffix()}.acme.com`;
  const name = `crdscope-${suffix()}`;
  const crdName = `anvils.${group}`;
  const client = await adminClient(t);
  t.after(async () => {
    await customApi()
      .deleteNamespacedCustomObject({ ...rootSyncs, name })
      .catch(() => undefined);
    await client.delete(crds, undefined, crdName).catch(() => undefined);
  });
  const proxy = await startApiProxy(t);
  // Everything the sync needs but CustomResourceDefinitions: the CRD watch is refused.
  const kubeconfig = await limitedKubeconfig(
    t,
    client,
    [
      {
        apiGroups: ["configsync.gke.io"],
        resources: ["rootsyncs", "rootsyncs/status"],
        verbs: ["get", "list", "watch", "update", "patch"],
      },
      { apiGroups: ["kpt.dev"], resources: ["resourcegroups", "resourcegroups/status"], verbs: ["*"] },
      { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
      { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list", "watch"] },
      { apiGroups: [group], resources: ["anvils"], verbs: ["*"] },
    ],
    { server: proxy.url },
  );
  await client.create(crds, anvilCrd(group));
  await crdEstablished(client, crdName);
  const repo = await TestRepo.create(t);
  // No namespace: a RootSync puts a namespaced object in "default", a cluster-scoped one nowhere.
  await repo.write(
    "config/anvil.yaml",
    JSON.stringify({ apiVersion: `${group}/v1`, kind: "Anvil", metadata: { name: "heavy" }, spec: { lbs: 10 } }),
  );
  const commit = await repo.commit("an Anvil");
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name }, { kubeconfig });
  await rootSynced(name, commit);
  await eventually(async () => (await client.get(anvils(group), "default", "heavy")) ?? undefined, {
    what: "the Anvil in default",
  });

  // The reconciler's lists and watches of Anvils wait while the CRD is replaced: its re-watch meets the new CRD,
  // never a 404 that would tell it the type went (the order an informer's backoff may give anyway).
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  t.after(() => release());
  proxy.hold = (r) => (r.method === "GET" && r.path.startsWith(`/apis/${group}/v1/`) ? released : undefined);
  await client.delete(crds, undefined, crdName);
  await eventually(async () => (await client.get(crds, undefined, crdName)) === undefined || undefined, {
    what: `${crdName} gone`,
  });
  await client.create(crds, anvilCrd(group, undefined, "Cluster"));
  await crdEstablished(client, crdName);
  proxy.hold = undefined;
  release();

  await eventually(async () => (await client.get(anvils(group, "v1", false), undefined, "heavy")) ?? undefined, {
    timeoutMs: 60_000,
    what: "the Anvil created again, cluster-scoped",
  });
  await eventually(
    async () => {
      const sync = ((await rootSyncStatus(name))["sync"] ?? {}) as JsonObject;
      return (((sync["errors"] ?? []) as JsonObject[]).length === 0 && sync["commit"] === commit) || undefined;
    },
    { timeoutMs: 30_000, what: "status.sync clean" },
  );
  // Its watch follows it at the new scope: a hand edit is corrected.
  await client.patch(anvils(group, "v1", false), undefined, "heavy", { spec: { lbs: 99 } }, "merge");
  await eventually(
    async () =>
      ((await client.get(anvils(group, "v1", false), undefined, "heavy"))?.["spec"] as JsonObject)["lbs"] === 10 ||
      undefined,
    { timeoutMs: 30_000, what: "the hand edit corrected" },
  );
});
