import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrorClass, KnvCode } from "@driftless/api";
import {
  KubeApiError,
  isAlreadyExists,
  isConflict,
  isForbidden,
  isInvalid,
  isNotFound,
  type KubeObject,
  type ResourceMapping,
} from "@driftless/kube";
import { eventually, testNamespace } from "../../support/index.ts";
import { adminClient, configMap, configMaps, namespaces, throwawayCrd, userClient, widget } from "./support.ts";

const deployments: ResourceMapping = {
  group: "apps",
  version: "v1",
  kind: "Deployment",
  resource: "deployments",
  namespaced: true,
  verbs: [],
};

void test("creates, reads, replaces, patches and deletes a ConfigMap", async (t) => {
  const client = await adminClient(t);
  const ns = await testNamespace(t, "kube-crud");

  const created = await client.create(configMaps, configMap(ns, "settings", { a: "1" }), {
    fieldManager: "driftless-test",
  });
  assert.equal(created.metadata.namespace, ns);
  assert.ok(created.metadata.uid !== undefined && created.metadata.resourceVersion !== undefined);

  const read = await client.get(configMaps, ns, "settings");
  assert.equal(read?.kind, "ConfigMap");
  assert.deepEqual(read?.["data"], { a: "1" });

  const replaced = await client.replace(configMaps, { ...(read as KubeObject), data: { a: "2" } });
  assert.deepEqual(replaced["data"], { a: "2" });
  assert.notEqual(replaced.metadata.resourceVersion, read?.metadata.resourceVersion);

  const merged = await client.patch(configMaps, ns, "settings", { data: { b: "3" } }, "merge");
  assert.deepEqual(merged["data"], { a: "2", b: "3" });
  const jsonPatched = await client.patch(configMaps, ns, "settings", [{ op: "remove", path: "/data/a" }], "json");
  assert.deepEqual(jsonPatched["data"], { b: "3" });
  const applied = await client.patch(
    configMaps,
    ns,
    "settings",
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings", namespace: ns }, data: { c: "4" } },
    "apply",
    {
      fieldManager: "driftless-test",
      force: true,
    },
  );
  assert.deepEqual(applied["data"], { b: "3", c: "4" });

  assert.equal(await client.delete(configMaps, ns, "settings"), true);
  assert.equal(await client.get(configMaps, ns, "settings"), undefined);
  assert.equal(await client.delete(configMaps, ns, "settings"), false, "a second delete finds nothing");
});

void test("a delete says from the server's answer whether the object is gone at once or held by a finalizer", async (t) => {
  const client = await adminClient(t);
  const ns = await testNamespace(t, "kube-delete-result");
  await client.create(configMaps, configMap(ns, "plain"));
  assert.equal(await client.deleteWithResult(configMaps, ns, "plain"), "removed");
  assert.equal(await client.deleteWithResult(configMaps, ns, "plain"), "absent");

  const held = configMap(ns, "held");
  await client.create(configMaps, { ...held, metadata: { ...held.metadata, finalizers: ["driftless.test/hold"] } });
  assert.equal(await client.deleteWithResult(configMaps, ns, "held"), "deleting");
  await client.patch(configMaps, ns, "held", { metadata: { finalizers: null } }, "merge");
  assert.equal(await client.get(configMaps, ns, "held"), undefined);

  // A Namespace is always held: its contents go first.
  await client.create(namespaces, { apiVersion: "v1", kind: "Namespace", metadata: { name: `${ns}-x` } });
  assert.equal(await client.deleteWithResult(namespaces, undefined, `${ns}-x`), "deleting");
});

void test("a replace with a stale resourceVersion fails with a retryable Conflict", async (t) => {
  const client = await adminClient(t);
  const ns = await testNamespace(t, "kube-conflict");
  const first = await client.create(configMaps, configMap(ns, "c", { v: "1" }));
  await client.replace(configMaps, { ...first, data: { v: "2" } });

  const error = await client.replace(configMaps, { ...first, data: { v: "stale" } }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(isConflict(error), `expected a Conflict, got ${String(error)}`);
  assert.equal(error.status, 409);
  assert.equal(error.reason, "Conflict");
  assert.equal(error.errorClass, ErrorClass.Retry);
  assert.equal(error.code, KnvCode.ApiServer);
  assert.deepEqual(error.resources, [{ group: "", kind: "ConfigMap", namespace: ns, name: "c" }]);
  assert.deepEqual((await client.get(configMaps, ns, "c"))?.["data"], { v: "2" }, "the stale write did not land");

  // A delete precondition on a stale resourceVersion is refused the same way.
  const deleteError = await client
    .delete(configMaps, ns, "c", { preconditions: { resourceVersion: first.metadata.resourceVersion ?? "" } })
    .catch((e: unknown) => e);
  assert.ok(isConflict(deleteError), `expected a Conflict, got ${String(deleteError)}`);
});

void test("creating an object that exists fails with AlreadyExists, not Conflict", async (t) => {
  const client = await adminClient(t);
  const ns = await testNamespace(t, "kube-exists");
  await client.create(configMaps, configMap(ns, "dup"));
  const error = await client.create(configMaps, configMap(ns, "dup")).catch((e: unknown) => e);
  assert.ok(isAlreadyExists(error), `expected AlreadyExists, got ${String(error)}`);
  assert.match(error.message, /create ConfigMap .*\/dup: configmaps "dup" already exists \(409 AlreadyExists\)/);
  assert.equal(isConflict(error), false, "AlreadyExists is not a Conflict: retrying a create will not help");
});

void test("404s: a missing object reads as undefined; an unserved resource type is a stalled NotFound", async (t) => {
  const client = await adminClient(t);
  const ns = await testNamespace(t, "kube-404");
  assert.equal(await client.get(configMaps, ns, "nope"), undefined);
  const objectMissing = await client
    .replace(configMaps, { ...configMap(ns, "nope"), metadata: { name: "nope", namespace: ns, resourceVersion: "1" } })
    .catch((e: unknown) => e);
  assert.ok(isNotFound(objectMissing));
  assert.equal(objectMissing.errorClass, ErrorClass.Terminal);

  const unserved: ResourceMapping = {
    group: "nope.driftless.test",
    version: "v1",
    kind: "Nope",
    resource: "nopes",
    namespaced: true,
    verbs: [],
  };
  const typeMissing = await client
    .create(unserved, { apiVersion: "nope.driftless.test/v1", kind: "Nope", metadata: { name: "n", namespace: ns } })
    .catch((e: unknown) => e);
  assert.ok(isNotFound(typeMissing), `expected NotFound, got ${String(typeMissing)}`);
  assert.equal(typeMissing.errorClass, ErrorClass.Stalled);
  assert.equal(typeMissing.code, KnvCode.UnknownObjectKind);
});

void test("an invalid object is a terminal Invalid error naming the field", async (t) => {
  const client = await adminClient(t);
  const ns = await testNamespace(t, "kube-invalid");
  const error = await client.create(configMaps, configMap(ns, "Not_A_Name")).catch((e: unknown) => e);
  assert.ok(isInvalid(error), `expected Invalid, got ${String(error)}`);
  assert.equal(error.status, 422);
  assert.equal(error.errorClass, ErrorClass.Terminal);
  assert.equal(error.code, KnvCode.Apply);
  assert.equal(error.details?.causes?.[0]?.field, "metadata.name");
});

void test("a user without RBAC gets a terminal Forbidden (KNV2013)", async (t) => {
  const client = await userClient(t);
  const error = await client.list(configMaps, { namespace: "default" }).catch((e: unknown) => e);
  assert.ok(isForbidden(error), `expected Forbidden, got ${String(error)}`);
  assert.equal(error.errorClass, ErrorClass.Terminal);
  assert.equal(error.code, KnvCode.InsufficientPermission);
});

void test("a strategic-merge patch keeps its $patch directive (the server honours it)", async (t) => {
  const client = await adminClient(t);
  const ns = await testNamespace(t, "kube-smp");
  const container = (name: string): Record<string, unknown> => ({ name, image: "registry.k8s.io/pause:3.10" });
  await client.create(deployments, {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: ns },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: "web" } },
      template: { metadata: { labels: { app: "web" } }, spec: { containers: [container("a"), container("b")] } },
    },
  });
  // Without the directive the list would be merged by name (a, b, c); with it, replaced (c).
  const patched = await client.patch(
    deployments,
    ns,
    "web",
    { spec: { template: { spec: { containers: [{ $patch: "replace" }, container("c")] } } } },
    "strategic-merge",
  );
  const containers = (
    patched["spec"] as { template: { spec: { containers: { name: string }[] } } }
  ).template.spec.containers.map((c) => c.name);
  assert.deepEqual(containers, ["c"]);
});

void test("replaceStatus and status patches write only the status subresource", async (t) => {
  const client = await adminClient(t);
  const ns = await testNamespace(t, "kube-status");
  const widgets = await throwawayCrd(t, client);
  const created = await client.create(widgets, widget(widgets, ns, "w", 1));
  const withStatus = await client.replaceStatus(widgets, {
    ...created,
    spec: { size: 99 },
    status: { phase: "Ready" },
  });
  assert.deepEqual(withStatus["status"], { phase: "Ready" });
  assert.deepEqual(withStatus["spec"], { size: 1 }, "spec changes are ignored on the status subresource");
  const patched = await client.patch(widgets, ns, "w", { status: { phase: "Done" } }, "merge", {
    subresource: "status",
  });
  assert.deepEqual(patched["status"], { phase: "Done" });
});

void test("Foreground deletion with a uid precondition removes the dependent, then the owner", async (t) => {
  const client = await adminClient(t);
  const ns = await testNamespace(t, "kube-fg");
  const owner = await client.create(configMaps, configMap(ns, "owner"));
  await client.create(configMaps, {
    ...configMap(ns, "dependent"),
    metadata: {
      name: "dependent",
      namespace: ns,
      ownerReferences: [
        { apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: owner.metadata.uid ?? "", blockOwnerDeletion: true },
      ],
    },
  });
  assert.equal(
    await client.delete(configMaps, ns, "owner", {
      propagationPolicy: "Foreground",
      preconditions: { uid: owner.metadata.uid ?? "" },
    }),
    true,
  );
  await eventually(
    async () =>
      (await client.get(configMaps, ns, "owner")) === undefined &&
      (await client.get(configMaps, ns, "dependent")) === undefined,
    {
      timeoutMs: 30_000,
      what: "the garbage collector to delete the dependent, then the owner",
    },
  );
});

void test("a KubeApiError thrown by the client is the package's class", async (t) => {
  const client = await adminClient(t);
  const error = await client
    .request({ method: "GET", path: "/api/v1/namespaces/kube-system/configmaps/does-not-exist" })
    .catch((e: unknown) => e);
  assert.ok(error instanceof KubeApiError);
  assert.equal(error.status, 404);
  assert.equal(client.requests.count("get"), 1);
});

void test("update adds and removes keys named as Object.prototype's members (constructor, toString, __proto__)", async (t) => {
  const client = await adminClient(t);
  const ns = await testNamespace(t, "kube-proto-keys");
  const created = await client.create(
    configMaps,
    JSON.parse(
      JSON.stringify(configMap(ns, "settings", { plain: "1" })).replace(
        '"data":{',
        '"data":{"toString":"a","valueOf":"b","__proto__":"c",',
      ),
    ) as KubeObject,
  );
  assert.deepEqual(Object.keys(created["data"] as object).sort(), ["__proto__", "plain", "toString", "valueOf"]);
  const next = JSON.parse(JSON.stringify(configMap(ns, "settings", { constructor: "x", plain: "1" }))) as KubeObject;
  const updated = await client.update(configMaps, created, next);
  assert.deepEqual(updated["data"], { constructor: "x", plain: "1" });
});

void test("update over a watch cache's copy (managedFields set to undefined) of an object without managedFields changes only what differs", async (t) => {
  const client = await adminClient(t);
  const ns = await testNamespace(t, "kube-update-cached");
  await client.create(configMaps, configMap(ns, "settings", { a: "1" }));
  // `[{}]` strips an object's managedFields (the API server's documented way); nothing writes them again until the next write.
  const stripped = await client.patch(
    configMaps,
    ns,
    "settings",
    [{ op: "replace", path: "/metadata/managedFields", value: [{}] }],
    "json",
  );
  assert.equal(stripped.metadata.managedFields, undefined, "the managedFields were not stripped");
  // The form the reconciler's watch cache keeps an object in (live-cache.ts cachedForm).
  const cached = { ...stripped, metadata: { ...stripped.metadata, managedFields: undefined } };
  const updated = await client.update(configMaps, cached, { ...cached, data: { a: "2" } });
  assert.deepEqual(updated["data"], { a: "2" });
});

void test("update over a stale copy whose patch no longer applies (a key it removes is gone) is a retryable Conflict, as a stale PUT was", async (t) => {
  const client = await adminClient(t);
  const ns = await testNamespace(t, "kube-update-stale");
  const read = await client.create(configMaps, {
    ...configMap(ns, "settings", { a: "1" }),
    metadata: { name: "settings", namespace: ns, labels: { stray: "x" } },
  });
  // Someone removes the label after our read; our patch removes it too.
  await client.patch(configMaps, ns, "settings", [{ op: "remove", path: "/metadata/labels/stray" }], "json");
  const error = await client
    .update(configMaps, read, { ...read, metadata: { ...read.metadata, labels: {} }, data: { a: "2" } })
    .catch((e: unknown) => e);
  assert.ok(isConflict(error), `expected a Conflict, got ${String(error)}`);
  assert.equal(error.errorClass, ErrorClass.Retry);
  assert.deepEqual((await client.get(configMaps, ns, "settings"))?.["data"], { a: "1" }, "the stale write landed");

  // An object the patch cannot make valid, unchanged since the read, stays the API server's 422.
  const fresh = (await client.get(configMaps, ns, "settings")) as KubeObject;
  const invalid = await client
    .update(configMaps, fresh, { ...fresh, data: { "not a key!": "v" } })
    .catch((e: unknown) => e);
  assert.ok(isInvalid(invalid), `expected Invalid, got ${String(invalid)}`);
});
