import { test } from "node:test";
import assert from "node:assert/strict";
import { parseSync, type RSync } from "@driftless/api";
import { planIdentity, type OwnedRole } from "./rbac-plan.ts";

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

const roleNamed = (plan: { roles: readonly OwnedRole[] }, name: string): OwnedRole | undefined =>
  plan.roles.find((r) => r.name === name);

test("a RepoSync's reconciler gets the shared base binding and a Role on its own RepoSync and ResourceGroups, by name", () => {
  const plan = planIdentity(sync("RepoSync", {}));
  assert.deepEqual(
    plan.shared.map((b) => `${b.kind} ${b.namespace}/${b.name} -> ${b.roleRef.name}`),
    [
      "RoleBinding team-a/configsync.gke.io:ns-reconciler -> configsync.gke.io:ns-reconciler",
      "ClusterRoleBinding undefined/configsync.gke.io:ns-reconciler-crd-reader -> configsync.gke.io:ns-reconciler-crd-reader",
    ],
  );
  assert.deepEqual(
    plan.owned.map((b) => `${b.kind} ${b.namespace}/${b.name} -> ${b.roleRef.kind}/${b.roleRef.name}`),
    ["RoleBinding team-a/ns-reconciler-team-a-sync -> Role/ns-reconciler-team-a-sync"],
  );
  assert.deepEqual(plan.roles, [
    {
      namespace: "team-a",
      name: "ns-reconciler-team-a-sync",
      rules: [
        {
          apiGroups: ["configsync.gke.io"],
          resources: ["reposyncs"],
          verbs: ["get", "list", "watch", "update", "patch"],
          resourceNames: ["repo-sync"],
        },
        {
          apiGroups: ["configsync.gke.io"],
          resources: ["reposyncs/status"],
          verbs: ["update", "patch"],
          resourceNames: ["repo-sync"],
        },
        {
          apiGroups: ["kpt.dev"],
          resources: ["resourcegroups", "resourcegroups/status"],
          verbs: ["get", "update", "patch", "delete"],
          resourceNames: ["repo-sync", "repo-sync.pending"],
        },
        { apiGroups: ["kpt.dev"], resources: ["resourcegroups"], verbs: ["create"] },
      ],
    },
  ]);
});

test("every rule of a sync's own Role that can name its objects does (create alone cannot)", () => {
  for (const kind of ["RepoSync", "RootSync"] as const) {
    const role = planIdentity(sync(kind, {})).roles[0];
    assert.ok(role);
    for (const rule of role.rules) {
      if (rule.verbs.includes("create")) assert.deepEqual(rule.verbs, ["create"]);
      else assert.ok((rule.resourceNames ?? []).length > 0, `${JSON.stringify(rule)} names no object`);
      // A list or watch passes resourceNames only with a metadata.name field selector (the API server's
      // answer is checked in test/integration/manager/rbac.test.ts): the sync itself, and nothing else.
      if (rule.verbs.includes("list") || rule.verbs.includes("watch"))
        assert.deepEqual(rule.resourceNames, [kind === "RootSync" ? "root-sync" : "repo-sync"], JSON.stringify(rule));
    }
  }
});

test("the Secrets a spec names get a Role of their own, by name, in the sync's namespace", () => {
  const plan = planIdentity(
    sync("RepoSync", {}, { auth: "token", secretRef: { name: "git-creds" }, caCertSecretRef: { name: "git-ca" } }),
  );
  assert.deepEqual(roleNamed(plan, "ns-reconciler-team-a-secrets"), {
    namespace: "team-a",
    name: "ns-reconciler-team-a-secrets",
    rules: [
      {
        apiGroups: [""],
        resources: ["secrets"],
        verbs: ["get", "list", "watch"],
        resourceNames: ["git-ca", "git-creds"],
      },
    ],
  });
  assert.deepEqual(
    plan.owned.find((b) => b.name === "ns-reconciler-team-a-secrets"),
    {
      kind: "RoleBinding",
      name: "ns-reconciler-team-a-secrets",
      namespace: "team-a",
      roleRef: { kind: "Role", name: "ns-reconciler-team-a-secrets" },
    },
  );
});

test("a RootSync with roleRefs gets the base binding, one binding per roleRef, its own Role and its Secret Role", () => {
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
    [
      "ClusterRoleBinding ClusterRole/view",
      "RoleBinding Role/root-reconciler-sync",
      "RoleBinding Role/root-reconciler-secrets",
    ],
  );
  assert.deepEqual(
    plan.roles.map((r) => `${r.namespace}/${r.name}`),
    ["config-management-system/root-reconciler-sync", "config-management-system/root-reconciler-secrets"],
  );
  assert.deepEqual(roleNamed(plan, "root-reconciler-sync")?.rules[0]?.resourceNames, ["root-sync"]);
  assert.deepEqual(roleNamed(plan, "root-reconciler-sync")?.rules[0]?.resources, ["rootsyncs"]);
  assert.deepEqual(roleNamed(plan, "root-reconciler-sync")?.rules[1]?.resources, ["rootsyncs/status"]);
});

test("a Helm RootSync restricted by roleRefs may get and watch exactly the ConfigMaps its valuesFileRefs name, in its namespace", () => {
  const parsed = parseSync({
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RootSync",
    metadata: { name: "root-sync", namespace: "config-management-system" },
    spec: {
      sourceFormat: "unstructured",
      sourceType: "helm",
      helm: {
        repo: "https://charts.example.com",
        chart: "web",
        valuesFileRefs: [{ name: "web-values" }, { name: "base-values", dataKey: "prod.yaml" }, { name: "web-values" }],
      },
      override: { roleRefs: [{ kind: "ClusterRole", name: "view" }] },
    },
  });
  if (!parsed.ok) throw new Error(parsed.errors.map((e) => e.message).join("; "));
  const plan = planIdentity(parsed.value);
  assert.deepEqual(roleNamed(plan, "root-reconciler-helm-values"), {
    namespace: "config-management-system",
    name: "root-reconciler-helm-values",
    rules: [
      {
        apiGroups: [""],
        resources: ["configmaps"],
        verbs: ["get", "list", "watch"],
        resourceNames: ["base-values", "web-values"],
      },
    ],
  });
  assert.ok(
    plan.owned.some(
      (b) => b.kind === "RoleBinding" && b.roleRef.kind === "Role" && b.roleRef.name === "root-reconciler-helm-values",
    ),
  );
  // Without valuesFileRefs there is no such Role.
  assert.equal(roleNamed(planIdentity(sync("RootSync", {})), "root-reconciler-helm-values"), undefined);
});
