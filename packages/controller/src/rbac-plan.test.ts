import { test } from "node:test";
import assert from "node:assert/strict";
import { parseSync, type RSync } from "@driftless/api";
import { planIdentity } from "./rbac-plan.ts";

function sync(kind: "RootSync" | "RepoSync", spec: Record<string, unknown>, git: Record<string, unknown> = {}): RSync {
  const parsed = parseSync({
    apiVersion: "configsync.gke.io/v1beta1",
    kind,
    metadata: {
      name: kind === "RootSync" ? "root-sync" : "repo-sync",
      namespace: kind === "RootSync" ? "config-management-system" : "team-a",
    },
    spec: { sourceFormat: "unstructured", ...spec, git: { repo: "https://example.com/r.git", auth: "none", ...git } },
  });
  if (!parsed.ok) throw new Error(parsed.errors.map((e) => e.message).join("; "));
  return parsed.value;
}

test("a RepoSync's reconciler gets the shared base binding and nothing else when its spec names no Secret", () => {
  const plan = planIdentity(sync("RepoSync", {}));
  assert.deepEqual(
    plan.shared.map((b) => `${b.kind} ${b.namespace}/${b.name} -> ${b.roleRef.name}`),
    ["RoleBinding team-a/configsync.gke.io:ns-reconciler -> configsync.gke.io:ns-reconciler"],
  );
  assert.deepEqual(plan.owned, []);
  assert.deepEqual(plan.roles, []);
});

test("the Secrets a spec names get a Role of their own, by name, in the sync's namespace", () => {
  const plan = planIdentity(
    sync("RepoSync", {}, { auth: "token", secretRef: { name: "git-creds" }, caCertSecretRef: { name: "git-ca" } }),
  );
  assert.deepEqual(plan.roles, [
    { namespace: "team-a", name: "ns-reconciler-team-a-secrets", secretNames: ["git-ca", "git-creds"] },
  ]);
  assert.deepEqual(plan.owned, [
    {
      kind: "RoleBinding",
      name: "ns-reconciler-team-a-secrets",
      namespace: "team-a",
      roleRef: { kind: "Role", name: "ns-reconciler-team-a-secrets" },
    },
  ]);
});

test("a RootSync with roleRefs gets the base binding, one binding per roleRef and its Secret Role", () => {
  const plan = planIdentity(
    sync(
      "RootSync",
      { override: { roleRefs: [{ kind: "ClusterRole", name: "view" }] } },
      { caCertSecretRef: { name: "ca" } },
    ),
  );
  assert.deepEqual(
    plan.shared.map((b) => b.name),
    ["configsync.gke.io:root-reconciler-base"],
  );
  assert.deepEqual(
    plan.owned.map((b) => `${b.kind} ${b.roleRef.kind}/${b.roleRef.name}`),
    ["ClusterRoleBinding ClusterRole/view", "RoleBinding Role/root-reconciler-secrets"],
  );
  assert.deepEqual(plan.roles, [
    { namespace: "config-management-system", name: "root-reconciler-secrets", secretNames: ["ca"] },
  ]);
});
