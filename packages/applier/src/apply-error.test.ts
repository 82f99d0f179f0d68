import { test } from "node:test";
import assert from "node:assert/strict";
import { ErrorClass, KnvCode, toConfigSyncError } from "@driftless/api";
import { KubeApiError } from "@driftless/kube";
import { ApplyError } from "./apply-object.ts";
import type { DesiredObject } from "./desired.ts";
import { describeId } from "./object-id.ts";
import { NamespaceInUseError, PruneError } from "./prune.ts";

const deployment: DesiredObject = {
  id: { group: "apps", kind: "Deployment", namespace: "bookstore", name: "hello-world" },
  apiVersion: "apps/v1",
  object: {},
  sourcePath: "acme/deployment.yaml",
  sourceHash: "abc1234",
  dependsOn: [],
};

test("a write refused by RBAC is KNV2009 naming the object and the refusal, as Config Sync's applier reports it", () => {
  const refusal = new KubeApiError({
    status: 403,
    reason: "Forbidden",
    operation: "patch",
    serverMessage:
      'deployments.apps "hello-world" is forbidden: User "system:serviceaccount:config-management-system:ns-reconciler-bookstore" cannot patch resource "deployments"',
  });
  const error = new ApplyError(deployment, refusal);
  assert.equal(error.code, KnvCode.Apply);
  assert.equal(error.errorClass, ErrorClass.Terminal, "waits for the next poll, as other refusals do");
  assert.match(error.message, /^failed to apply Deployment\.apps, bookstore\/hello-world: .*is forbidden: User/);
  assert.deepEqual(error.resources?.[0]?.sourcePath, "acme/deployment.yaml");
  assert.equal(error.resources?.[0]?.version, "v1", "the version declared, as Config Sync's errorResources");
});

test("a refused create names the object, as the server does for Config Sync's server-side apply; other refusals are left as the server words them", () => {
  const refused = (operation: string, serverMessage: string): KubeApiError =>
    new KubeApiError({ status: 403, reason: "Forbidden", operation, serverMessage });
  const create = new ApplyError(
    deployment,
    refused("create", 'deployments.apps is forbidden: User "u" cannot create resource "deployments"'),
  );
  assert.equal(
    create.message,
    'failed to apply Deployment.apps, bookstore/hello-world: deployments.apps "hello-world" is forbidden: User "u" cannot create resource "deployments"',
  );
  const patch = 'deployments.apps "hello-world" is forbidden: User "u" cannot patch resource "deployments"';
  assert.equal(
    new ApplyError(deployment, refused("patch", patch)).message,
    `failed to apply Deployment.apps, bookstore/hello-world: ${patch}`,
  );
});

test("a prune refused for good (RBAC, an admission policy) is terminal, as an apply's refusal; one that failed in passing retries", () => {
  const id = { group: "", kind: "ConfigMap", namespace: "shop", name: "a" };
  const refused = (status: number, reason: string, serverMessage: string): KubeApiError =>
    new KubeApiError({ status, reason, operation: "delete", serverMessage });
  const policy = refused(
    403,
    "Forbidden",
    "configmaps \"a\" is forbidden: ValidatingAdmissionPolicy 'keep' with binding 'keep' denied request: kept",
  );
  assert.equal(new PruneError(id, policy).errorClass, ErrorClass.Terminal);
  assert.equal(
    new PruneError(id, refused(422, "Invalid", 'configmaps "a" is invalid')).errorClass,
    ErrorClass.Terminal,
  );
  assert.equal(new PruneError(id, refused(500, "InternalError", "etcd timeout")).errorClass, ErrorClass.Retry);
  assert.equal(new PruneError(id, refused(409, "Conflict", "changed")).errorClass, ErrorClass.Retry);
  assert.equal(new PruneError(id, new Error("socket hang up")).errorClass, ErrorClass.Retry);
});

test("objects are named in errors as Config Sync names them: Kind.group, namespace/name", () => {
  assert.equal(describeId(deployment.id), "Deployment.apps, bookstore/hello-world");
  assert.equal(describeId({ group: "", kind: "ConfigMap", namespace: "shop", name: "cm" }), "ConfigMap, shop/cm");
  assert.equal(describeId({ group: "", kind: "Namespace", name: "shipping" }), "Namespace, /shipping");
  const skipped = new NamespaceInUseError({ group: "", kind: "Namespace", name: "shipping" });
  assert.equal(skipped.message, "skipped delete of Namespace, /shipping: namespace still in use: shipping");
});

test("a refused prune is KNV2009 naming the object in its message only, without errorResources, as Config Sync's prune errors", () => {
  const refusal = new KubeApiError({
    status: 403,
    reason: "Forbidden",
    operation: "delete",
    serverMessage: 'configmaps "a" is forbidden: User "u" cannot delete resource "configmaps"',
  });
  const written = toConfigSyncError(
    new PruneError({ group: "", kind: "ConfigMap", namespace: "shop", name: "a" }, refusal),
  );
  assert.deepEqual(written, {
    code: "2009",
    errorMessage:
      'KNV2009: failed to prune ConfigMap, shop/a: configmaps "a" is forbidden: User "u" cannot delete resource "configmaps"\n\nFor more information, see https://g.co/cloud/acm-errors#knv2009',
  });
  const skipped = toConfigSyncError(new NamespaceInUseError({ group: "", kind: "Namespace", name: "shipping" }));
  assert.equal(skipped.errorResources, undefined, "a skipped delete names no errorResources either");
});
