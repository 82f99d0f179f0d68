/**
 * The Secrets a sync's source names, watched as Config Sync's reconciler-manager watches them
 * (mapSecretToRootSyncs, mapSecretToRepoSyncs): with spec.git.period at 1 h, a reconciler under the
 * manager's RBAC reads its source again as soon as a Secret it names is changed or deleted, not at its
 * next poll. A local (file://) repository syncs with any auth whose Secret is valid, as git-sync fetches it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { eventually, suffix, TestRepo } from "../../support/index.ts";
import {
  admin,
  configMap,
  createNamespace,
  createSync,
  getSync,
  Mapping,
  rootSyncObject,
  startManager,
  synced,
  systemNamespace,
  type SourceError,
} from "./helpers.ts";

test("a RepoSync syncs as soon as its caCertSecretRef Secret gets its cert key, and reports the Secret missing as soon as it is deleted, with spec.git.period at 1h", async (t) => {
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
  // Without its key the Secret fails the pass for good (terminal: no retry would find the key later), so
  // only the watch can bring the next pass before the poll an hour away.
  await client.create(Mapping.Secret, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: ca, namespace: ns },
    stringData: { other: "x" },
  });
  await createSync(t, {
    apiVersion: "configsync.gke.io/v1beta1",
    kind: "RepoSync",
    metadata: { name: "repo-sync", namespace: ns, labels: { ...manager.scope.labels } },
    spec: {
      sourceFormat: "unstructured",
      git: { repo: repo.url, branch: repo.branch, auth: "none", period: "1h", caCertSecretRef: { name: ca } },
    },
  });
  const sourceError = (what: string): Promise<SourceError> =>
    eventually(
      async () => {
        const status = ((await getSync("RepoSync", ns, "repo-sync"))?.["status"] ?? {}) as {
          source?: { errors?: SourceError[] };
        };
        return status.source?.errors?.find((e) => e.errorMessage?.includes(what));
      },
      { timeoutMs: 60_000, what: `the RepoSync to report ${what}` },
    );

  assert.equal(
    (await sourceError(`caCertSecretRef was set, but "cert" key is not present in "${ca}" Secret`)).code,
    "1061",
  );
  await client.patch(
    Mapping.Secret,
    ns,
    ca,
    { stringData: { cert: "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n" } },
    "merge",
  );
  await synced("RepoSync", ns, "repo-sync", commit, 60_000);

  await client.delete(Mapping.Secret, ns, ca);
  assert.equal((await sourceError(`Secret ${ca} not found`)).code, "1061");
});

test("a RootSync with auth token on a local repository syncs once its Secret has the token key, as git-sync fetches it whatever the auth, with spec.git.period at 1h", async (t) => {
  const manager = await startManager(t);
  const ns = await createNamespace(t, "token-local");
  const client = await admin();
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("token-local", ns, { v: "1" }));
  const commit = await repo.commit("one ConfigMap");
  const creds = `git-creds-${suffix()}`;
  await client.create(Mapping.Secret, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: creds, namespace: systemNamespace },
    stringData: { username: "git" },
  });
  t.after(() => client.delete(Mapping.Secret, systemNamespace, creds).catch(() => undefined));
  const name = `token-${suffix()}`;
  const sync = rootSyncObject(name, manager.scope, { repo: repo.url, branch: repo.branch, period: "1h" });
  (sync["spec"] as { git: Record<string, unknown> }).git["auth"] = "token";
  (sync["spec"] as { git: Record<string, unknown> }).git["secretRef"] = { name: creds };
  await createSync(t, sync);
  // Config Sync's words for the key missing from the Secret.
  await eventually(
    async () => {
      const status = ((await getSync("RootSync", systemNamespace, name))?.["status"] ?? {}) as {
        source?: { errors?: SourceError[] };
      };
      return status.source?.errors?.some((e) =>
        e.errorMessage?.includes(`git authType was set as "token" but "token" key is not present in "${creds}" Secret`),
      );
    },
    { timeoutMs: 60_000, what: "the RootSync to report the Secret's missing token key" },
  );
  await client.patch(
    Mapping.Secret,
    systemNamespace,
    creds,
    { stringData: { token: "unused-by-a-local-repository" } },
    "merge",
  );
  await synced("RootSync", systemNamespace, name, commit, 60_000);
});
