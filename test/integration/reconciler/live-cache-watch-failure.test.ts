/**
 * A reconciler's watch cache for a type whose watches the server keeps refusing (here: RBAC allows
 * get and list on ConfigMaps, not watch). Past the deadline a pass must not trust the cache: it
 * vouches for nothing (so nothing is skipped as Unchanged) and reads objects from the server, so an
 * object deleted meanwhile is seen as missing, and re-created by the pass.
 */
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import { ApplySetLabel } from "@driftless/api";
import { applySetId, type SyncIdentity } from "@driftless/applier";
import {
  configMapMapping as configMaps,
  KubeApiError,
  KubeClient,
  type KubeObject,
  type ResourceMapping,
} from "@driftless/kube";
import { InformerLiveState } from "../../../packages/sync/src/live-cache.ts";
import { eventually, testEnv, testNamespace } from "../../support/index.ts";

const roles: ResourceMapping = {
  group: "rbac.authorization.k8s.io",
  version: "v1",
  kind: "Role",
  resource: "roles",
  namespaced: true,
  verbs: ["create"],
};

const roleBindings: ResourceMapping = { ...roles, kind: "RoleBinding", resource: "rolebindings" };

async function clientOf(t: TestContext, kubeconfig: string): Promise<KubeClient> {
  const client = await KubeClient.fromKubeconfig(kubeconfig);
  t.after(() => client.close());
  return client;
}

/** The test's ordinary user, allowed to get and list ConfigMaps in `namespace`, never to watch them. */
async function listOnlyUser(t: TestContext, admin: KubeClient, namespace: string): Promise<KubeClient> {
  await admin.create(roles, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: "configmap-reader", namespace },
    rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list"] }],
  });
  await admin.create(roleBindings, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: "configmap-reader", namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "configmap-reader" },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: testEnv().userName }],
  });
  const user = await clientOf(t, testEnv().userKubeconfig);
  // RBAC changes reach the authorizer through its own watch: wait until this one has.
  await eventually(() => user.list(configMaps, { namespace }).then(() => true), { what: "the user's list grant" });
  return user;
}

function labelled(sync: SyncIdentity, name: string, data: Record<string, string>): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: sync.namespace, labels: { [ApplySetLabel.PartOf]: applySetId(sync) } },
    data,
  };
}

void test("a live state whose watch keeps failing stops vouching for its cache and reads the server instead", async (t) => {
  const admin = await clientOf(t, testEnv().kubeconfig);
  const ns = await testNamespace(t, "live-nowatch");
  const sync: SyncIdentity = { kind: "RepoSync", namespace: ns, name: "repo-sync" };
  await admin.create(configMaps, labelled(sync, "deleted", { v: "1" }));
  await admin.create(configMaps, labelled(sync, "changed", { v: "1" }));
  const user = await listOnlyUser(t, admin, ns);
  const errors: Error[] = [];
  const live = new InformerLiveState(user, {
    sync,
    namespace: ns,
    watchDeadlineMs: 1000,
    onInformerError: (_mapping, error) => errors.push(error),
  });
  t.after(() => live.stop());
  // As a pass does before it reads: the caches keep only what is declared.
  live.declare(
    ["deleted", "changed"].map((name) => ({
      id: { group: "", kind: "ConfigMap", namespace: ns, name },
      apiVersion: "v1",
    })),
  );
  const events: string[] = [];
  live.onEvent((event, _mapping, object) => events.push(`${event} ${object.metadata.name}`));

  assert.equal((await live.get(configMaps, ns, "deleted"))?.metadata.name, "deleted");
  assert.ok(live.cachedResourceVersion(configMaps, ns, "changed") !== undefined, "listed: the cache vouches");
  await eventually(() => errors.some((e) => e instanceof KubeApiError && e.status === 403), {
    timeoutMs: 10_000,
    what: "a refused watch, told to onInformerError",
  });
  // Before the fix the cache, frozen at its first list, was trusted for ever.
  await eventually(() => live.cachedResourceVersion(configMaps, ns, "changed") === undefined, {
    timeoutMs: 15_000,
    what: "the cache no longer vouching, past the watch deadline",
  });

  await admin.delete(configMaps, ns, "deleted");
  const changed = await admin.get(configMaps, ns, "changed");
  assert.ok(changed !== undefined);
  await admin.replace(configMaps, { ...changed, data: { v: "2" } });
  // Read from the server at once: no waiting for the informer's next relist.
  assert.equal(await live.get(configMaps, ns, "deleted"), undefined, "the deletion is seen: a pass re-creates it");
  assert.deepEqual((await live.get(configMaps, ns, "changed"))?.["data"], { v: "2" });
  // And the remediator hears of the deletion, from the informer's next relist.
  await eventually(() => events.includes("delete deleted"), { timeoutMs: 60_000, what: "the relist's delete event" });
});
