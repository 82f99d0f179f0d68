import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject } from "@driftless/kube";
import { Annotator, PatchMaker } from "@driftless/objectmatcher";
import { awaitsAdoption, configSyncAppliedRecord, withAdoptedRecord } from "./adoption.ts";

/** A Deployment as the API server returns it after Config Sync's apply and a scale by someone else. */
function deployment(): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: "web",
      namespace: "shop",
      resourceVersion: "42",
      labels: { app: "web", "app.kubernetes.io/managed-by": "configmanagement.gke.io" },
      annotations: {
        "configsync.gke.io/manager": ":root",
        "configsync.gke.io/declared-fields": "{}",
        "deployment.kubernetes.io/revision": "1",
      },
      managedFields: [
        {
          manager: "configsync.gke.io",
          operation: "Apply",
          apiVersion: "apps/v1",
          fieldsType: "FieldsV1",
          fieldsV1: {
            "f:metadata": {
              "f:annotations": { "f:configsync.gke.io/manager": {}, "f:configsync.gke.io/declared-fields": {} },
              "f:labels": { "f:app": {}, "f:app.kubernetes.io/managed-by": {} },
            },
            "f:spec": {
              "f:selector": {},
              "f:template": {
                "f:metadata": { "f:labels": { "f:app": {} } },
                "f:spec": {
                  "f:containers": {
                    'k:{"name":"app"}': {
                      ".": {},
                      "f:image": {},
                      "f:env": { 'k:{"name":"MODE"}': { ".": {}, "f:name": {}, "f:value": {} } },
                      "f:name": {},
                    },
                  },
                },
              },
            },
          },
        },
        {
          manager: "kube-controller-manager",
          operation: "Update",
          apiVersion: "apps/v1",
          fieldsV1: { "f:metadata": { "f:annotations": { "f:deployment.kubernetes.io/revision": {} } } },
        },
        { manager: "kubectl", operation: "Update", fieldsV1: { "f:spec": { "f:replicas": {} } } },
      ],
    },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: {
          containers: [
            {
              name: "app",
              image: "nginx:1",
              env: [
                { name: "MODE", value: "prod" },
                { name: "INJECTED", value: "by-webhook" },
              ],
              imagePullPolicy: "IfNotPresent",
            },
            { name: "sidecar", image: "proxy:1" },
          ],
        },
      },
    },
  };
}

test("what Config Sync applied is read from the fields its Apply entry owns, nothing more", () => {
  assert.deepEqual(configSyncAppliedRecord(deployment()), {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: "web",
      namespace: "shop",
      // declared-fields is Config Sync's own and stays; the controller's revision and kubectl's replicas were never its.
      annotations: { "configsync.gke.io/manager": ":root" },
      labels: { app: "web", "app.kubernetes.io/managed-by": "configmanagement.gke.io" },
    },
    spec: {
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: { containers: [{ name: "app", image: "nginx:1", env: [{ name: "MODE", value: "prod" }] }] },
      },
    },
  });
});

test("an object without Config Sync's Apply entry (or read from a cache, without managedFields) has no derived record", () => {
  const live = deployment();
  assert.equal(
    configSyncAppliedRecord({ ...live, metadata: { ...live.metadata, managedFields: undefined } }),
    undefined,
  );
  const byKubectl = {
    ...live,
    metadata: { ...live.metadata, managedFields: [{ manager: "kubectl", operation: "Apply" }] },
  };
  assert.equal(configSyncAppliedRecord(byKubectl), undefined);
});

test("only an object of this sync without a driftless record awaits adoption", () => {
  const live = deployment();
  assert.equal(awaitsAdoption(live, "driftless.dev/last-applied-configuration", ":root"), true);
  assert.equal(awaitsAdoption(live, "driftless.dev/last-applied-configuration", "team"), false);
  const recorded = {
    ...live,
    metadata: {
      ...live.metadata,
      annotations: { "configsync.gke.io/manager": ":root", "driftless.dev/last-applied-configuration": "{}" },
    },
  };
  assert.equal(awaitsAdoption(recorded, "driftless.dev/last-applied-configuration", ":root"), false);
});

test("an object another inventory owns awaits no adoption, though its manager value is this sync's", () => {
  const owned = (inventory: string): KubeObject => {
    const live = deployment();
    return {
      ...live,
      metadata: {
        ...live.metadata,
        annotations: { ...live.metadata.annotations, "config.k8s.io/owning-inventory": inventory },
      },
    };
  };
  const recordKey = "driftless.dev/last-applied-configuration";
  // RootSyncs `root-sync` and `repo-sync` both write `:root`.
  assert.equal(
    awaitsAdoption(
      owned("config-management-system_repo-sync"),
      recordKey,
      ":root",
      "config-management-system_root-sync",
    ),
    false,
  );
  assert.equal(
    awaitsAdoption(
      owned("config-management-system_root-sync"),
      recordKey,
      ":root",
      "config-management-system_root-sync",
    ),
    true,
  );
  assert.equal(awaitsAdoption(deployment(), recordKey, ":root", "config-management-system_root-sync"), true);
});

test("with the derived record the three-way match removes a field Config Sync applied and Git dropped, and leaves others' fields", () => {
  const annotator = new Annotator();
  const matcher = new PatchMaker(annotator);
  const adopted = withAdoptedRecord(deployment(), annotator);
  assert.ok(adopted !== undefined);
  assert.equal(adopted.metadata["managedFields"], undefined, "managedFields must not be sent back in an update");
  const declared = (env: readonly object[]): object => ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: "web",
      namespace: "shop",
      labels: { app: "web", "app.kubernetes.io/managed-by": "configmanagement.gke.io" },
      annotations: { "configsync.gke.io/manager": ":root" },
    },
    spec: {
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: { containers: [{ name: "app", image: "nginx:1", env }] },
      },
    },
  });
  assert.ok(
    matcher.calculate(adopted, declared([{ name: "MODE", value: "prod" }])).isEmpty(),
    "an unchanged declaration must not be written",
  );
  const removed = matcher.calculate(adopted, declared([]));
  assert.equal(removed.isEmpty(), false, "a field Config Sync applied and Git no longer declares must be removed");
  // Without the derived record the removal is invisible: the reason adoption exists.
  assert.ok(matcher.calculate(deployment(), declared([])).isEmpty());
});

test("what Config Sync applied keeps keys named like Object.prototype members, and skips them once gone", () => {
  // JSON as the API server sends it: `__proto__` is then a key of its own.
  const live = JSON.parse(`{
    "apiVersion": "v1", "kind": "ConfigMap",
    "metadata": { "name": "c", "namespace": "shop", "managedFields": [{
      "manager": "configsync.gke.io", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
      "fieldsV1": { "f:data": { "f:__proto__": {}, "f:toString": {}, "f:constructor": {}, "f:plain": {} } } }] },
    "data": { "__proto__": "p", "toString": "t", "plain": "x" }
  }`) as KubeObject;
  const record = configSyncAppliedRecord(live);
  assert.ok(record !== undefined);
  const data = record["data"] as Record<string, unknown>;
  // constructor is owned but gone from the live object (someone removed it): nothing of it to record.
  assert.deepEqual(Object.entries(data), [
    ["__proto__", "p"],
    ["toString", "t"],
    ["plain", "x"],
  ]);
  assert.equal(Object.getPrototypeOf(data), Object.prototype);
});
