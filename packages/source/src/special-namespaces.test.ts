import assert from "node:assert/strict";
import { test } from "node:test";
import { UserAnnotation } from "@driftless/api";
import { implicitNamespace, withSpecialNamespacesDetached } from "./implicit-namespaces.ts";

test("a declared special Namespace is applied marked to be detached; others are left as declared, and the same object each time", () => {
  const special = implicitNamespace("kube-system");
  // implicitNamespace marks it already; a declaration without the mark is what a source holds.
  const declared = {
    ...special,
    metadata: { name: "kube-system" },
    raw: { apiVersion: "v1", kind: "Namespace", metadata: { name: "kube-system", labels: { a: "b" } } },
  };
  const team = { ...declared, id: { ...declared.id, name: "team" }, metadata: { name: "team" } };
  const out = withSpecialNamespacesDetached([declared, team]);
  const detached = out[0];
  assert.ok(detached !== undefined);
  const rawMeta = detached.raw["metadata"] as { annotations?: Record<string, string>; labels?: Record<string, string> };
  assert.equal(rawMeta.annotations?.[UserAnnotation.LifecycleDeletion], "detach");
  assert.deepEqual(rawMeta.labels, { a: "b" }, "the declared labels were lost");
  assert.equal(detached.metadata.annotations?.[UserAnnotation.LifecycleDeletion], "detach");
  assert.equal(out[1], team, "an ordinary Namespace was changed");
  assert.equal(withSpecialNamespacesDetached([declared, team])[0], detached, "a resync got a new object");
  const none = [team];
  assert.equal(withSpecialNamespacesDetached(none), none);
});
