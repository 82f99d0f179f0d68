/**
 * Faults that leave the reconciler with an incomplete view of the cluster: an aggregated API that
 * stops answering, and a type its identity may not list. Neither may prune, forget or hang. They run
 * on a control plane of their own (see usePrivateControlPlane).
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import type { KubeClient, KubeObject, ResourceMapping } from "@driftless/kube";
import {
  coreApi,
  createRootSync,
  customApi,
  eventually,
  rootSynced,
  rootSyncGone,
  rootSyncNamespace,
  rootSyncs,
  rootSyncStatus,
  startReconciler,
  suffix,
  syncErrorsAt,
  testNamespace,
  TestRepo,
  type JsonObject,
} from "../../support/index.ts";
import { usePrivateControlPlane } from "../../support/private-control-plane.ts";
import { adminClient } from "../kube/support.ts";
import { limitedKubeconfig } from "../../support/limited-identity.ts";

// The dead aggregated API below stalls every namespace deletion cluster-wide while it is registered.
await usePrivateControlPlane();

const json = (obj: unknown): string => JSON.stringify(obj);
const configMap = (namespace: string, name: string, data: Record<string, string> = { k: name }): unknown => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace },
  data,
});

const apiServices: ResourceMapping = {
  group: "apiregistration.k8s.io",
  version: "v1",
  kind: "APIService",
  resource: "apiservices",
  namespaced: false,
  verbs: [],
};
const resourceGroups: ResourceMapping = {
  group: "kpt.dev",
  version: "v1alpha1",
  kind: "ResourceGroup",
  resource: "resourcegroups",
  namespaced: true,
  verbs: [],
};

/** An aggregated API registered for `group` whose Service has no endpoints: it never answers. */
async function deadAggregatedApi(t: TestContext, client: KubeClient, group: string, namespace: string): Promise<void> {
  await coreApi().createNamespacedService({
    namespace,
    body: { metadata: { name: "dead-api" }, spec: { ports: [{ port: 443 }], selector: { app: "nothing" } } },
  });
  const name = `v1.${group}`;
  await client.create(apiServices, {
    apiVersion: "apiregistration.k8s.io/v1",
    kind: "APIService",
    metadata: { name },
    spec: {
      group,
      version: "v1",
      service: { namespace, name: "dead-api", port: 443 },
      insecureSkipTLSVerify: true,
      groupPriorityMinimum: 1000,
      versionPriority: 15,
    },
  } as KubeObject);
  t.after(() =>
    client.delete(apiServices, undefined, name).then(
      () => undefined,
      () => undefined,
    ),
  );
}

async function inventoryNames(client: KubeClient, name: string): Promise<string[]> {
  const group = await client.get(resourceGroups, rootSyncNamespace, name);
  const resources = ((group?.["spec"] as JsonObject | undefined)?.["resources"] ?? []) as {
    kind: string;
    name: string;
  }[];
  return resources.map((r) => `${r.kind}/${r.name}`).sort();
}

test("an aggregated API that stops answering: its objects are neither pruned nor forgotten, and Foreground deletion waits for it", async (t) => {
  const id = suffix();
  const name = `deadapi-${id}`;
  const group = `d${id}.fault.example.com`;
  const namespace = await testNamespace(t, "deadapi");
  const client = await adminClient(t);
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", json(configMap(namespace, "a")));
  const first = await repo.commit("a");
  await createRootSync(name, repo, { annotations: { "configsync.gke.io/deletion-propagation-policy": "Foreground" } });
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });
  await rootSynced(name, first);

  // The inventory holds an object of the aggregated API, as if it had been synced while the API answered.
  const stored = await client.get(resourceGroups, rootSyncNamespace, name);
  assert.ok(stored !== undefined);
  const spec = stored["spec"] as { resources: JsonObject[] };
  await client.replace(resourceGroups, {
    ...stored,
    spec: { ...spec, resources: [...spec.resources, { group, kind: "Thing", namespace, name: "thing" }] },
  });
  await deadAggregatedApi(t, client, group, namespace);

  await repo.write("config/a.yaml", json(configMap(namespace, "a", { k: "changed" })));
  const second = await repo.commit("change a: the Thing is a prune candidate now");
  const errors = await syncErrorsAt(name, second);
  assert.ok(
    errors.some((e) => String(e["errorMessage"]).includes(group) && /Thing/.test(String(e["errorMessage"]))),
    `no error naming ${group} in ${JSON.stringify(errors)}`,
  );
  assert.deepEqual(
    await inventoryNames(client, name),
    ["ConfigMap/a", "Thing/thing"],
    "the unreadable object left the inventory",
  );
  const a = await coreApi().readNamespacedConfigMap({ namespace, name: "a" });
  assert.deepEqual(a.data, { k: "changed" }, "the other types did not sync");

  // Foreground deletion cannot tell that the Thing is gone: it waits and says why.
  await customApi().deleteNamespacedCustomObject({ ...rootSyncs, name });
  await eventually(
    async () => {
      const conditions = ((await rootSyncStatus(name))["conditions"] ?? []) as JsonObject[];
      const failure = conditions.find((c) => c["type"] === "ReconcilerFinalizerFailure" && c["status"] === "True");
      // Config Sync's condition: a fixed message, the objects in errors.
      return failure !== undefined && JSON.stringify(failure["errors"] ?? []).includes("Thing") ? failure : undefined;
    },
    { timeoutMs: 60_000, what: "the finalizer to report the unreadable object" },
  );
  // Once the API is unregistered, the Thing's type is known to be gone and the deletion completes.
  await client.delete(apiServices, undefined, `v1.${group}`);
  await rootSyncGone(name, 90_000);
});

test("a type the reconciler may not list is reported with the server's message, and the other types still sync", async (t) => {
  const id = suffix();
  const name = `nolist-${id}`;
  const namespace = await testNamespace(t, "nolist");
  const client = await adminClient(t);
  const kubeconfig = await limitedKubeconfig(t, client, [
    {
      apiGroups: ["configsync.gke.io"],
      resources: ["rootsyncs", "rootsyncs/status"],
      verbs: ["get", "list", "watch", "update", "patch"],
    },
    { apiGroups: ["kpt.dev"], resources: ["resourcegroups", "resourcegroups/status"], verbs: ["*"] },
    { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
    { apiGroups: [""], resources: ["configmaps"], verbs: ["*"] },
    // The namespace of what it declares (implicit namespaces: namespaceStrategy's default).
    { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list", "watch", "create", "update", "patch"] },
    // Secrets may be read one by one, never listed: the watch cache cannot start.
    { apiGroups: [""], resources: ["secrets"], verbs: ["get", "create", "update"] },
  ]);
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", json(configMap(namespace, "a")));
  await repo.write(
    "config/s.yaml",
    json({ apiVersion: "v1", kind: "Secret", metadata: { name: "s", namespace }, stringData: { k: "v" } }),
  );
  const commit = await repo.commit("a config map and a secret");
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name }, { kubeconfig });

  const errors = await syncErrorsAt(name, commit);
  const listError = errors.find((e) =>
    /polling for status failed: failed to list \/v1, Kind=Secret: secrets is forbidden: /.test(
      String(e["errorMessage"]),
    ),
  );
  assert.ok(listError !== undefined, `no list error for secrets in ${JSON.stringify(errors)}`);
  assert.match(String(listError["errorMessage"]), /forbidden/i, "the server's message is not in the error");
  // Config Sync's applier reports a type it cannot poll as KNV2009.
  assert.equal(listError["code"], "2009");
  const a = await coreApi().readNamespacedConfigMap({ namespace, name: "a" });
  assert.deepEqual(a.data, { k: "a" }, "the ConfigMap was not applied beside the unlistable Secret");

  // A refusal that lasts (403) does not hold back the prune of what left Git, as Config Sync goes on pruning.
  await repo.remove("config/a.yaml");
  await repo.write("config/b.yaml", json(configMap(namespace, "b")));
  const second = await repo.commit("a replaced by b");
  await syncErrorsAt(name, second);
  await eventually(
    async () => {
      try {
        await coreApi().readNamespacedConfigMap({ namespace, name: "a" });
        return undefined;
      } catch {
        return true;
      }
    },
    { timeoutMs: 30_000, what: "ConfigMap a pruned while Secrets still cannot be listed" },
  );
});

test("a declared kind whose API group's discovery fails is the API server's error (KNV2002), not an unknown kind set aside", async (t) => {
  const id = suffix();
  const name = `undiscovered-${id}`;
  const namespace = await testNamespace(t, "undisc");
  const client = await adminClient(t);
  const group = `undisc-${id}.example.com`;
  await deadAggregatedApi(t, client, group, namespace);
  const repo = await TestRepo.create(t);
  await repo.write("config/a.yaml", json(configMap(namespace, "a")));
  await repo.write(
    "config/thing.yaml",
    json({ apiVersion: `${group}/v1`, kind: "Thing", metadata: { name: "t", namespace } }),
  );
  const commit = await repo.commit("a config map and a thing of an unanswering API");
  await createRootSync(name, repo);
  await startReconciler(t, { kind: "RootSync", namespace: rootSyncNamespace, name });

  const errors = await eventually(
    async () => {
      const status = await rootSyncStatus(name);
      const all = ["source", "sync"].flatMap(
        (block) => ((status[block] as JsonObject | undefined)?.["errors"] ?? []) as JsonObject[],
      );
      return all.length > 0 ? all : undefined;
    },
    { timeoutMs: 60_000, what: "an error for the undiscoverable kind" },
  );
  assert.deepEqual(
    errors.map((e) => e["code"]),
    ["2002"],
    JSON.stringify(errors),
  );
  assert.match(String(errors[0]?.["errorMessage"]), /API discovery failed for .*Kind=Thing/);
  assert.notEqual((await rootSyncStatus(name))["lastSyncedCommit"], commit);
});
