/**
 * The Secrets a sync's source names, watched as Config Sync's reconciler-manager watches them
 * (mapSecretToRootSyncs, mapSecretToRepoSyncs): with spec.git.period at 1 h, a reconciler under the
 * manager's RBAC reads its source again as soon as a Secret it names is created or deleted, not at its next poll.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { eventually, suffix, TestRepo } from "../../support/index.ts";
import { admin, configMap, createNamespace, createSync, getSync, Mapping, startManager, synced } from "./helpers.ts";

interface SourceError {
  readonly code?: string;
  readonly errorMessage?: string;
}

const secrets = { ...Mapping.ConfigMap, kind: "Secret", resource: "secrets" };

test("a RepoSync whose caCertSecretRef Secret is missing syncs as soon as the Secret is created, and reports it missing as soon as it is deleted, with spec.git.period at 1h", async (t) => {
  const manager = await startManager(t);
  const ns = await createNamespace(t, "secret-watch");
  const client = await admin();
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("watched", ns, { v: "1" }));
  const commit = await repo.commit("one ConfigMap");
  // The namespace's admin lets its reconciler write ConfigMaps; Secrets are what the manager's Role allows.
  await client.create(Mapping.RoleBinding, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: "reconciler-edit", namespace: ns },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "edit" },
    subjects: [{ kind: "ServiceAccount", name: `ns-reconciler-${ns}`, namespace: "config-management-system" }],
  });
  const ca = `git-ca-${suffix()}`;
  await createSync(t, {
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RepoSync",
    metadata: { name: "repo-sync", namespace: ns, labels: { ...manager.scope.labels } },
    spec: {
      sourceFormat: "unstructured",
      git: { repo: repo.url, branch: repo.branch, auth: "none", period: "1h", caCertSecretRef: { name: ca } },
    },
  });
  const missing = (): Promise<SourceError> =>
    eventually(
      async () => {
        const status = ((await getSync("RepoSync", ns, "repo-sync"))?.["status"] ?? {}) as {
          source?: { errors?: SourceError[] };
        };
        return status.source?.errors?.find((e) => e.errorMessage?.includes(`Secret ${ca} not found`));
      },
      { timeoutMs: 60_000, what: `the RepoSync to report Secret ${ca} not found` },
    );

  assert.equal((await missing()).code, "1061");
  await client.create(secrets, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: ca, namespace: ns },
    stringData: { cert: "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n" },
  });
  // The first poll ran at the start; the next is an hour away.
  await synced("RepoSync", ns, "repo-sync", commit, 60_000);

  await client.delete(secrets, ns, ca);
  assert.equal((await missing()).code, "1061");
});
