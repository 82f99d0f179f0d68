import { test } from "node:test";
import assert from "node:assert/strict";
import { remedyFor } from "./error-remedies.ts";

test("an apply refused by RBAC (KNV2009) is answered with the permission to grant, other KNV2009s with the object", () => {
  const refused =
    'failed to apply Deployment.apps, bookstore/hello-world: deployments.apps "hello-world" is forbidden: User "system:serviceaccount:config-management-system:ns-reconciler-bookstore" cannot patch resource "deployments"';
  assert.match(remedyFor("KNV2009", refused), /Grant the reconciler's ServiceAccount/);
  assert.equal(remedyFor("KNV2009", refused), remedyFor("KNV2013"));
  assert.match(
    remedyFor("KNV2009", "failed to wait for Deployment.apps, bookstore/web: reconcile timeout"),
    /describe it/,
  );
});

test("a commit deleting every Namespace (KNV2006) is answered with the two commits, not allow-empty-source, which does not lift it", () => {
  const failsafe =
    "KNV2006: New commit would delete all Namespaces [billing shipping]. If this is not a mistake, remove all but one of them in one commit, then the last one in another";
  assert.match(remedyFor("KNV2006", failsafe), /all but one, then the last/);
  assert.doesNotMatch(remedyFor("KNV2006", failsafe), /annotate the sync/);
  assert.match(remedyFor("KNV2006", "KNV2006: the source declares no objects but 3 are managed"), /allow-empty-source/);
});
