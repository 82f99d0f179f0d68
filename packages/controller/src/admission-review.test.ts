import { test } from "node:test";
import assert from "node:assert/strict";
import { Annotator } from "@driftless/objectmatcher";
import { refuseReconciler, reviewAdmission, type AdmissionRequest } from "./admission-review.ts";

type Obj = { [key: string]: unknown } & { metadata: { [key: string]: unknown } };

/** A Deployment as driftless leaves it: management annotations and the record of its declaration. */
function managed(declaration: Obj, extra: (obj: Obj) => void = () => undefined): Obj {
  const obj = structuredClone(declaration);
  obj.metadata["labels"] = {
    ...(obj.metadata["labels"] as object),
    "app.kubernetes.io/managed-by": "configmanagement.gke.io",
  };
  obj.metadata["annotations"] = {
    ...(obj.metadata["annotations"] as object),
    "configmanagement.gke.io/managed": "enabled",
    "configsync.gke.io/manager": ":root_apps",
    "configsync.gke.io/resource-id": "apps_deployment_shop_web",
  };
  new Annotator().setLastAppliedAnnotation(obj);
  // Live: with what the API server and others added.
  const spec = obj["spec"] as { template: { spec: { containers: Record<string, unknown>[] } } };
  for (const c of spec.template.spec.containers) c["terminationMessagePath"] = "/dev/termination-log";
  extra(obj);
  return obj;
}

const declared: Obj = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "shop", labels: { app: "web" } },
  spec: {
    replicas: 2,
    template: {
      metadata: { labels: { app: "web" } },
      spec: { containers: [{ name: "web", image: "nginx:1", env: [{ name: "MODE", value: "prod" }] }] },
    },
  },
};

function update(oldObj: Obj, change: (obj: Obj) => void, username = "alice", groups = ["system:authenticated"]) {
  const newObj = structuredClone(oldObj);
  change(newObj);
  const request: AdmissionRequest = {
    uid: "1",
    kind: { group: "apps", version: "v1", kind: "Deployment" },
    operation: "UPDATE",
    userInfo: { username, groups },
    object: newObj as never,
    oldObject: oldObj as never,
  };
  return reviewAdmission(request);
}

const containers = (obj: Obj): Record<string, unknown>[] =>
  (obj["spec"] as { template: { spec: { containers: Record<string, unknown>[] } } }).template.spec.containers;

test("a declared field changed by a user is refused with Config Sync's message", () => {
  const decision = update(managed(declared), (o) => ((o["spec"] as Record<string, unknown>)["replicas"] = 3));
  assert.deepEqual(decision, {
    allowed: false,
    reason: "Forbidden",
    message: 'alice cannot modify fields of object "apps_deployment_shop_web" managed by Config Sync: .spec.replicas',
  });
});

test("inside keyed lists, only declared fields of declared items count", () => {
  const live = managed(declared);
  const image = update(live, (o) => (containers(o)[0]!["image"] = "nginx:2"));
  assert.equal(!image.allowed && image.message.endsWith(`.spec.template.spec.containers[name="web"].image`), true);
  const env = update(live, (o) => (containers(o)[0]!["env"] = [{ name: "MODE", value: "dev" }]));
  assert.equal(
    !env.allowed && env.message.endsWith(`.spec.template.spec.containers[name="web"].env[name="MODE"].value`),
    true,
  );
  // Not declared: an added env var, a sidecar, the server's defaults, an annotation.
  assert.equal(
    update(live, (o) => (containers(o)[0]!["env"] as unknown[]).push({ name: "X", value: "1" })).allowed,
    true,
  );
  assert.equal(update(live, (o) => containers(o).push({ name: "sidecar", image: "envoy" })).allowed, true);
  assert.equal(update(live, (o) => (containers(o)[0]!["terminationMessagePath"] = "/tmp/x")).allowed, true);
  assert.equal(
    update(live, (o) => ((o.metadata["annotations"] as Record<string, string>)["note"] = "hi")).allowed,
    true,
  );
});

test("Config Sync metadata may not be changed, and `mutation: ignore` lets declared fields go", () => {
  const live = managed(declared);
  const removed = update(
    live,
    (o) => delete (o.metadata["annotations"] as Record<string, string>)["configsync.gke.io/manager"],
  );
  assert.equal(removed.allowed, false);
  assert.match(
    !removed.allowed ? removed.message : "",
    /cannot modify Config Sync metadata of object .*: \.metadata\.annotations\.configsync\.gke\.io\/manager$/,
  );
  const ignored = managed(declared, (o) => {
    (o.metadata["annotations"] as Record<string, string>)["client.lifecycle.config.k8s.io/mutation"] = "ignore";
  });
  assert.equal(update(ignored, (o) => ((o["spec"] as Record<string, unknown>)["replicas"] = 5)).allowed, true);
});

test("creating or deleting a managed object is refused; a copy of the annotations is not managed", () => {
  const live = managed(declared);
  const del = reviewAdmission({
    uid: "1",
    kind: { group: "apps", version: "v1", kind: "Deployment" },
    operation: "DELETE",
    userInfo: { username: "alice" },
    oldObject: live as never,
  });
  assert.deepEqual(del, {
    allowed: false,
    reason: "Forbidden",
    message: 'alice is not authorized to delete managed resource "apps_deployment_shop_web"',
  });
  // The namespace controller empties a namespace being deleted.
  assert.equal(
    reviewAdmission({
      uid: "1",
      kind: { group: "apps", version: "v1", kind: "Deployment" },
      operation: "DELETE",
      userInfo: { username: "system:serviceaccount:kube-system:namespace-controller" },
      oldObject: live as never,
    }).allowed,
    true,
  );
  const copy = structuredClone(live);
  copy.metadata["name"] = "copy";
  const create = reviewAdmission({
    uid: "1",
    kind: { group: "apps", version: "v1", kind: "Deployment" },
    operation: "CREATE",
    userInfo: { username: "alice" },
    object: copy as never,
  });
  assert.equal(create.allowed, true, "resource-id names another object: not managed");
});

test("the owning reconciler may write; another may not; a RootSync's may take over, not delete, a RepoSync's", () => {
  const sa = (name: string): [string, string[]] => [
    `system:serviceaccount:config-management-system:${name}`,
    ["system:serviceaccounts", "system:serviceaccounts:config-management-system", "system:authenticated"],
  ];
  const live = managed(declared);
  const bump = (o: Obj): void => void ((o["spec"] as Record<string, unknown>)["replicas"] = 3);
  assert.equal(update(live, bump, ...sa("root-reconciler-apps")).allowed, true);
  const other = update(live, bump, ...sa("root-reconciler-other"));
  assert.deepEqual(other, {
    allowed: false,
    reason: "Forbidden",
    message:
      'config sync "root-reconciler-other" can not UPDATE object "Deployment.apps, shop/web" managed by config sync "root-reconciler-apps"',
  });
  // Same name, wrong namespace: not a reconciler, just a user.
  assert.equal(
    update(live, bump, "system:serviceaccount:shop:root-reconciler-apps", ["system:serviceaccounts"]).allowed,
    false,
  );
  const id = { group: "", kind: "ConfigMap", namespace: "shop", name: "cm" };
  assert.equal(refuseReconciler("root-reconciler", "shop", id, "UPDATE"), undefined);
  assert.match(refuseReconciler("root-reconciler", "shop", id, "DELETE") ?? "", /can not DELETE/);
  assert.match(refuseReconciler("ns-reconciler-shop", ":root", id, "UPDATE") ?? "", /can not UPDATE/);
  assert.equal(refuseReconciler("ns-reconciler-shop", "shop", id, "DELETE"), undefined);
  const repoSync = { group: "configsync.gke.io", kind: "RepoSync", namespace: "shop", name: "repo-sync" };
  assert.equal(refuseReconciler("reconciler-manager", ":root", repoSync, "UPDATE"), undefined);
  assert.equal(refuseReconciler("ns-reconciler-shop", ":root", repoSync, "UPDATE"), undefined);
  assert.match(refuseReconciler("ns-reconciler-shop", ":root", repoSync, "DELETE") ?? "", /can not DELETE/);
});

test("an object adopted from Config Sync without a record is protected by its declared-fields annotation", () => {
  const live: Obj = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: "web",
      namespace: "shop",
      labels: { "app.kubernetes.io/managed-by": "configmanagement.gke.io", app: "web" },
      annotations: {
        "configmanagement.gke.io/managed": "enabled",
        "configsync.gke.io/manager": ":root_apps",
        "configsync.gke.io/resource-id": "apps_deployment_shop_web",
        "configsync.gke.io/declared-fields": JSON.stringify({
          "f:metadata": { "f:labels": { "f:app": {} } },
          "f:spec": {
            "f:replicas": {},
            "f:template": {
              "f:spec": { "f:containers": { 'k:{"name":"web"}': { ".": {}, "f:image": {}, "f:name": {} } } },
            },
          },
        }),
      },
    },
    spec: { replicas: 2, template: { spec: { containers: [{ name: "web", image: "nginx:1", env: [] }] } } },
  };
  const image = update(live, (o) => (containers(o)[0]!["image"] = "nginx:2"));
  assert.equal(
    !image.allowed &&
      image.message.endsWith(`managed by Config Sync: .spec.template.spec.containers[name="web"].image`),
    true,
  );
  const label = update(live, (o) => ((o.metadata["labels"] as Record<string, string>)["app"] = "api"));
  assert.equal(!label.allowed && label.message.endsWith(": .metadata.labels.app"), true);
  assert.equal(update(live, (o) => (containers(o)[0]!["env"] = [{ name: "X", value: "1" }])).allowed, true);
  assert.equal(update(live, (o) => ((o.metadata["labels"] as Record<string, string>)["team"] = "a")).allowed, true);
});

test("once deletion has begun, the finalizers Git declares may be removed (the deletion finishes); nothing else may change", () => {
  const withFinalizer: Obj = {
    ...declared,
    metadata: { ...declared.metadata, finalizers: ["example.com/cleanup", "example.com/other"] },
  };
  const deleting = managed(withFinalizer, (o) => (o.metadata["deletionTimestamp"] = "2026-11-27T00:00:00Z"));
  const removeOne = update(deleting, (o) => (o.metadata["finalizers"] = ["example.com/other"]), "cleanup-controller");
  assert.equal(removeOne.allowed, true, JSON.stringify(removeOne));
  const removeAll = update(deleting, (o) => delete o.metadata["finalizers"], "cleanup-controller");
  assert.equal(removeAll.allowed, true, JSON.stringify(removeAll));
  // With the finalizer, a declared field changed is refused as before.
  const alsoReplicas = update(deleting, (o) => {
    o.metadata["finalizers"] = [];
    (o["spec"] as Record<string, unknown>)["replicas"] = 3;
  });
  assert.equal(alsoReplicas.allowed, false);
  // Not being deleted: the declared finalizers stay protected.
  const live = managed(withFinalizer);
  assert.equal(update(live, (o) => (o.metadata["finalizers"] = ["example.com/other"])).allowed, false);
});

test("the garbage collector may not delete a managed object through an owner Git does not declare", () => {
  const gcDelete = (obj: Obj) =>
    reviewAdmission({
      uid: "1",
      kind: { group: "apps", version: "v1", kind: "Deployment" },
      namespace: "shop",
      operation: "DELETE",
      userInfo: { username: "system:serviceaccount:kube-system:generic-garbage-collector" },
      oldObject: obj as never,
    });
  const owner = { apiVersion: "v1", kind: "ConfigMap", name: "tenant-owned", uid: "11111111-2222" };
  // A user added the owner by hand (no declared field changes), then deleted it.
  const adopted = managed(declared, (obj) => {
    obj.metadata["ownerReferences"] = [owner];
  });
  assert.deepEqual(gcDelete(adopted), {
    allowed: false,
    reason: "Forbidden",
    message:
      'system:serviceaccount:kube-system:generic-garbage-collector is not authorized to delete managed resource "apps_deployment_shop_web"',
  });
  // An owner Git declares is the user's own choice: its collection goes through, as does an object with none.
  const withDeclaredOwner = structuredClone(declared);
  withDeclaredOwner.metadata["ownerReferences"] = [owner];
  assert.equal(gcDelete(managed(withDeclaredOwner)).allowed, true);
  assert.equal(gcDelete(managed(declared)).allowed, true);
});
