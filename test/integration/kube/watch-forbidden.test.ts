/**
 * An identity whose RBAC allows listing ConfigMaps but not watching them: every watch is refused
 * (403) after a good first list. The informer must not freeze on its first list: it relists, and
 * says its watch is failing until one is established again.
 */
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import { Informer, KubeApiError, type KubeClient, type KubeObject, type ResourceMapping } from "@driftless/kube";
import { eventually, testEnv, testNamespace } from "../../support/index.ts";
import { adminClient, configMap, configMaps, userClient } from "./support.ts";

const roles: ResourceMapping = {
  group: "rbac.authorization.k8s.io",
  version: "v1",
  kind: "Role",
  resource: "roles",
  namespaced: true,
  verbs: ["create", "get", "update"],
};

const roleBindings: ResourceMapping = { ...roles, kind: "RoleBinding", resource: "rolebindings" };

function role(namespace: string, verbs: readonly string[]): KubeObject {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: "configmap-reader", namespace },
    rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: [...verbs] }],
  };
}

/** Lets the test's ordinary user do `verbs` on ConfigMaps in `namespace`; returns its client once it can list. */
async function userWho(t: TestContext, admin: KubeClient, namespace: string, verbs: readonly string[]) {
  await admin.create(roles, role(namespace, verbs));
  await admin.create(roleBindings, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: "configmap-reader", namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "configmap-reader" },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: testEnv().userName }],
  });
  const user = await userClient(t);
  // RBAC changes reach the authorizer through its own watch: wait until this one has.
  await eventually(() => user.list(configMaps, { namespace }).then(() => true), { what: "the user's list grant" });
  return user;
}

function forbidden(error: Error | undefined): boolean {
  return error instanceof KubeApiError && error.status === 403;
}

void test("an informer whose watches are forbidden relists, so a delete and a create made meanwhile reach its cache", async (t) => {
  const admin = await adminClient(t);
  const ns = await testNamespace(t, "kube-nowatch");
  await admin.create(configMaps, configMap(ns, "a"));
  await admin.create(configMaps, configMap(ns, "b"));
  const user = await userWho(t, admin, ns, ["get", "list"]);
  const errors: Error[] = [];
  const informer = new Informer(user, configMaps, {
    namespace: ns,
    backoff: { initialMs: 50, maxMs: 500 },
    onError: (e) => errors.push(e),
  });
  t.after(() => informer.stop());
  informer.start();
  await informer.synced();
  assert.deepEqual(
    informer
      .list()
      .map((o) => o.metadata.name)
      .sort(),
    ["a", "b"],
  );
  const lists = user.requests.count("list");
  await eventually(() => errors.some(forbidden), { timeoutMs: 10_000, what: "a refused watch" });

  await admin.delete(configMaps, ns, "a");
  await admin.create(configMaps, configMap(ns, "c"));
  // Without a watch only a relist sees these; before the fix the cache kept "a" for ever.
  await eventually(() => informer.get(ns, "a") === undefined && informer.get(ns, "c") !== undefined, {
    timeoutMs: 15_000,
    what: "the delete and the create, by a relist",
  });
  assert.ok(user.requests.count("list") > lists, "relisted");
  assert.ok(informer.watchFailingSince !== undefined, "the watch is reported failing");
  assert.ok(forbidden(informer.watchError), `the watch's error: ${String(informer.watchError)}`);

  // Watching allowed again: the next watch is established and the failure clears.
  const granted = await admin.get(roles, ns, "configmap-reader");
  assert.ok(granted !== undefined);
  await admin.replace(roles, { ...granted, rules: role(ns, ["get", "list", "watch"])["rules"] });
  // A watch counts as established at its first event: each probe changes "d" to send one.
  await admin.create(configMaps, configMap(ns, "d"));
  let touches = 0;
  await eventually(
    async () => {
      if (informer.watchFailingSince === undefined) return true;
      await admin.patch(configMaps, ns, "d", { data: { touch: String(++touches) } }, "merge");
      return false;
    },
    { timeoutMs: 15_000, intervalMs: 200, what: "an established watch" },
  );
  await admin.patch(configMaps, ns, "d", { data: { touch: "last" } }, "merge");
  await eventually(() => (informer.get(ns, "d")?.["data"] as { touch?: string } | undefined)?.touch === "last", {
    timeoutMs: 5000,
    what: "a change to d, by the watch",
  });
  assert.equal(informer.watchError, undefined);
});
