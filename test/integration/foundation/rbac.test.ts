import { test } from "node:test";
import assert from "node:assert/strict";
import { RbacAuthorizationV1Api } from "@kubernetes/client-node";
import { customApi, expectStatus, kubeConfig, testEnv, testNamespace, yamlFixture } from "../../support/index.ts";

const repoSyncs = (namespace: string) => ({
  group: "configsync.gke.io",
  version: "v1beta1",
  namespace,
  plural: "reposyncs",
});

test("the non-admin identity is denied RootSyncs and RepoSyncs until RBAC grants them", async (t) => {
  const namespace = await testNamespace(t);
  const body = yamlFixture("configsync-docs/reposync-token.yaml", { NAMESPACE: namespace });
  await expectStatus(403, () => customApi("user").createNamespacedCustomObject({ ...repoSyncs(namespace), body }));
  await expectStatus(403, () =>
    customApi("user").listClusterCustomObject({ group: "configsync.gke.io", version: "v1beta1", plural: "rootsyncs" }),
  );
});

test("a Role bound in one namespace lets the non-admin identity manage RepoSyncs there and nowhere else", async (t) => {
  const allowed = await testNamespace(t);
  const other = await testNamespace(t);
  const rbac = kubeConfig("admin").makeApiClient(RbacAuthorizationV1Api);
  await rbac.createNamespacedRole({
    namespace: allowed,
    body: {
      metadata: { name: "reposync-editor" },
      rules: [
        {
          apiGroups: ["configsync.gke.io"],
          resources: ["reposyncs"],
          verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
        },
      ],
    },
  });
  await rbac.createNamespacedRoleBinding({
    namespace: allowed,
    body: {
      metadata: { name: "reposync-editor" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "reposync-editor" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: testEnv().userName }],
    },
  });

  const user = customApi("user");
  // RBAC is enforced by the real authorizer; the binding takes effect within the informer's resync.
  const created = await retryWhileForbidden(() =>
    user.createNamespacedCustomObject({
      ...repoSyncs(allowed),
      body: yamlFixture("configsync-docs/reposync-token.yaml", { NAMESPACE: allowed }),
    }),
  );
  assert.ok(created !== undefined);
  await expectStatus(403, () =>
    user.createNamespacedCustomObject({
      ...repoSyncs(other),
      body: yamlFixture("configsync-docs/reposync-token.yaml", { NAMESPACE: other }),
    }),
  );
  // The Role grants reposyncs only: the status subresource and other kinds stay denied.
  await expectStatus(403, () => user.getNamespacedCustomObjectStatus({ ...repoSyncs(allowed), name: "repo-sync" }));
  await expectStatus(403, () =>
    user.listNamespacedCustomObject({
      group: "kpt.dev",
      version: "v1alpha1",
      namespace: allowed,
      plural: "resourcegroups",
    }),
  );
});

async function retryWhileForbidden<T>(fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code !== 403 || Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
