/**
 * The RBAC in manifests/ is sufficient (every other test runs the manager with it) and not wider
 * than needed: what the manager and reconcilers may do, asked of the API server's own authorizer
 * (SubjectAccessReview). A RepoSync's reconciler gets Config Sync's base role; what it may apply is
 * the namespace admin's RoleBinding (grantRepoSyncReconciler), as Config Sync documents.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parse, parseAllDocuments } from "yaml";
import { isForbidden, KubeApiError, type KubeClient, type KubeObject } from "@driftless/kube";
import { resourceGroupMapping } from "@driftless/applier";
import { ApplySetAnnotation, ApplySetLabel, Finalizer, reconcilerName, SyncAnnotation } from "@driftless/api";
import {
  missingReconcilerWritePolicy,
  ReconcilerWritePolicyName,
  secretRoleName,
  syncRoleName,
} from "@driftless/controller";
import { findRepoRoot } from "@driftless/local-cluster";
import { eventually, suffix, TestRepo } from "../../support/index.ts";
import { grantRepoSyncReconciler } from "../../support/rbac.ts";
import {
  admin,
  applyManifest,
  clientAs,
  mappingOf,
  configMap,
  createNamespace,
  createSync,
  getObject,
  getSync,
  managerKubeconfig,
  Mapping,
  repoSyncObject,
  rootSyncObject,
  startManager,
  synced,
  systemNamespace,
} from "./helpers.ts";

interface Attributes {
  readonly verb: string;
  readonly resource: string;
  readonly group?: string;
  readonly namespace?: string;
  readonly subresource?: string;
  readonly name?: string;
}

async function allowed(serviceAccount: string, attributes: Attributes, namespace = systemNamespace): Promise<boolean> {
  const client = await admin();
  const review = await client.request<{ status?: { allowed?: boolean } }>({
    method: "POST",
    path: "/apis/authorization.k8s.io/v1/subjectaccessreviews",
    body: {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: {
        user: `system:serviceaccount:${namespace}:${serviceAccount}`,
        groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, "system:authenticated"],
        resourceAttributes: { group: "", ...attributes },
      },
    },
  });
  return review.status?.allowed === true;
}

test("the manager's ServiceAccount is granted what managing reconcilers takes, no direct read of Secrets (but its webhook certificate) or write of synced objects, and bind on cluster-admin (cluster-admin-equivalent)", async () => {
  await managerKubeconfig(); // applies manifests/
  // The whole install: the resource-group-controller's read of every kind is its own identity's, not the manager's.
  await applyManifest("resource-group-controller.yaml", { skipKinds: ["Deployment"] });
  const manager = "reconciler-manager";
  const may: Attributes[] = [
    { verb: "watch", resource: "reposyncs", group: "configsync.gke.io" },
    { verb: "update", resource: "rootsyncs", group: "configsync.gke.io", namespace: systemNamespace },
    { verb: "update", resource: "reposyncs", subresource: "status", group: "configsync.gke.io", namespace: "any" },
    { verb: "create", resource: "deployments", group: "apps", namespace: systemNamespace },
    // Process mode (manager-process-rbac.yaml, which the tests apply): tokens for its reconciler children.
    { verb: "create", resource: "serviceaccounts", subresource: "token", namespace: systemNamespace },
    { verb: "create", resource: "rolebindings", group: "rbac.authorization.k8s.io", namespace: "team-a" },
    { verb: "update", resource: "leases", group: "coordination.k8s.io", namespace: systemNamespace },
    // Per-sync Roles reading only the Secrets a spec names (a Role with what the manager lacks needs escalate).
    { verb: "create", resource: "roles", group: "rbac.authorization.k8s.io", namespace: "team-a" },
    { verb: "escalate", resource: "roles", group: "rbac.authorization.k8s.io", namespace: "team-a" },
    // Binding RootSync reconcilers to cluster-admin or any roleRef: with it the manager could bind itself to
    // cluster-admin, so its token is as strong as cluster-admin's (manifests/manager-rbac.yaml says so).
    { verb: "bind", resource: "clusterroles", group: "rbac.authorization.k8s.io", name: "cluster-admin" },
    // Admission protection: its own webhook configuration and certificate Secret, by name.
    {
      verb: "update",
      resource: "validatingwebhookconfigurations",
      group: "admissionregistration.k8s.io",
      name: "admission-webhook.configsync.gke.io",
    },
    { verb: "get", resource: "secrets", namespace: systemNamespace, name: "driftless-admission-webhook-cert" },
    // It reads the policy that keeps reconcilers off their own spec, to warn when it is missing.
    {
      verb: "get",
      resource: "validatingadmissionpolicies",
      group: "admissionregistration.k8s.io",
      name: ReconcilerWritePolicyName,
    },
  ];
  const mayNot: Attributes[] = [
    { verb: "get", resource: "secrets", namespace: systemNamespace },
    { verb: "list", resource: "secrets" },
    { verb: "create", resource: "configmaps", namespace: "team-a" },
    { verb: "delete", resource: "namespaces" },
    { verb: "create", resource: "deployments", group: "apps", namespace: "team-a" },
    { verb: "create", resource: "serviceaccounts", subresource: "token", namespace: "team-a" },
    { verb: "create", resource: "serviceaccounts", namespace: "team-a" },
    { verb: "create", resource: "clusterroles", group: "rbac.authorization.k8s.io" },
    { verb: "escalate", resource: "clusterroles", group: "rbac.authorization.k8s.io" },
    { verb: "get", resource: "secrets", namespace: "team-a", name: "git-creds" },
    { verb: "delete", resource: "customresourcedefinitions", group: "apiextensions.k8s.io" },
    {
      verb: "update",
      resource: "validatingwebhookconfigurations",
      group: "admissionregistration.k8s.io",
      name: "other",
    },
    { verb: "delete", resource: "mutatingwebhookconfigurations", group: "admissionregistration.k8s.io" },
    { verb: "get", resource: "secrets", namespace: systemNamespace, name: "driftless-redis" },
    {
      verb: "update",
      resource: "validatingadmissionpolicies",
      group: "admissionregistration.k8s.io",
      name: ReconcilerWritePolicyName,
    },
    { verb: "delete", resource: "validatingadmissionpolicybindings", group: "admissionregistration.k8s.io" },
  ];
  for (const a of may)
    assert.equal(
      await allowed(manager, a),
      true,
      `the manager may not ${a.verb} ${a.resource}${a.subresource ? `/${a.subresource}` : ""} in ${a.namespace ?? "the cluster"}`,
    );
  for (const a of mayNot)
    assert.equal(
      await allowed(manager, a),
      false,
      `the manager may ${a.verb} ${a.resource}${a.subresource ? `/${a.subresource}` : ""} in ${a.namespace ?? "the cluster"}`,
    );
  // The control plane runs the policy, as manifests/ installs it: the manager's check finds it with its own token.
  assert.deepEqual(await missingReconcilerWritePolicy(await clientAs(manager)), []);
});

test("the resource-group-controller's ServiceAccount reads every kind, Secrets included, and writes ResourceGroup status only", async () => {
  await applyManifest("resource-group-controller.yaml", { skipKinds: ["Deployment"] });
  const controller = "resource-group-controller";
  const namespace = "resource-group-system";
  const may: Attributes[] = [
    { verb: "list", resource: "secrets" },
    { verb: "watch", resource: "widgets", group: "example.com" },
    { verb: "get", resource: "deployments", group: "apps", namespace: "team-a" },
    { verb: "update", resource: "resourcegroups", subresource: "status", group: "kpt.dev", namespace: "team-a" },
    { verb: "update", resource: "leases", group: "coordination.k8s.io", namespace },
  ];
  const mayNot: Attributes[] = [
    { verb: "update", resource: "resourcegroups", group: "kpt.dev", namespace: "team-a" },
    { verb: "create", resource: "configmaps", namespace: "team-a" },
    { verb: "patch", resource: "rootsyncs", group: "configsync.gke.io", namespace: systemNamespace },
    { verb: "update", resource: "leases", group: "coordination.k8s.io", namespace: systemNamespace },
    { verb: "create", resource: "serviceaccounts", subresource: "token", namespace },
  ];
  for (const [expected, attributes] of [
    [true, may],
    [false, mayNot],
  ] as const) {
    const wrong: string[] = [];
    for (const a of attributes)
      if ((await allowed(controller, a, namespace)) !== expected)
        wrong.push(`${a.verb} ${a.resource} ${a.subresource ?? ""}`);
    assert.deepEqual(wrong, [], `${controller} ${expected ? "may not" : "may"}: ${wrong.join("; ")}`);
  }
});

/** Asks, for each of `attributes`, whether `serviceAccount` may; fails naming every answer that differs. */
async function expectAllowed(
  serviceAccount: string,
  expected: boolean,
  attributes: readonly Attributes[],
): Promise<void> {
  const wrong: string[] = [];
  for (const a of attributes) {
    if ((await allowed(serviceAccount, a)) !== expected)
      wrong.push(
        `${a.verb} ${a.resource}${a.subresource ? `/${a.subresource}` : ""}${a.name ? ` ${a.name}` : ""} in ${a.namespace ?? "the cluster"}`,
      );
  }
  assert.deepEqual(wrong, [], `${serviceAccount} ${expected ? "may not" : "may"}: ${wrong.join("; ")}`);
}

/** `obj` with `change` merged into its spec (and into spec.git when given). */
function withSpec(obj: KubeObject, change: Record<string, unknown>, git: Record<string, unknown> = {}): KubeObject {
  const spec = obj["spec"] as Record<string, unknown>;
  return { ...obj, spec: { ...spec, ...change, git: { ...(spec["git"] as Record<string, unknown>), ...git } } };
}

const managerFinalizer = Finalizer.ReconcilerManager;
const reconcilerFinalizer = Finalizer.Reconciler;

const secrets = (namespace: string, name?: string): Attributes => ({
  verb: "get",
  resource: "secrets",
  namespace,
  ...(name === undefined ? {} : { name }),
});

test("a RepoSync's reconciler has Config Sync's base role, and reads only the Secrets its spec names", async (t) => {
  const manager = await startManager(t);
  const namespace = await createNamespace(t, "base");
  const elsewhere = await createNamespace(t, "elsewhere");
  const sync = repoSyncObject(namespace, "repo-sync", manager.scope, {
    repo: "https://example.invalid/team.git",
    branch: "main",
  });
  const git = { auth: "token", secretRef: { name: "git-creds" }, caCertSecretRef: { name: "git-ca" } };
  await createSync(t, withSpec(sync, {}, git));
  const reconciler = `ns-reconciler-${namespace}`;
  const role = secretRoleName(reconciler);
  await eventually(async () => (await getObject(Mapping.RoleBinding, namespace, role)) !== undefined, {
    what: `the RoleBinding ${namespace}/${role}`,
  });
  await expectAllowed(reconciler, true, [
    { verb: "get", resource: "reposyncs", group: "configsync.gke.io", namespace, name: "repo-sync" },
    // Its own sync, watched by name (a metadata.name field selector is what the authorizer sees as the name).
    { verb: "list", resource: "reposyncs", group: "configsync.gke.io", namespace, name: "repo-sync" },
    { verb: "watch", resource: "reposyncs", group: "configsync.gke.io", namespace, name: "repo-sync" },
    {
      verb: "update",
      resource: "reposyncs",
      subresource: "status",
      group: "configsync.gke.io",
      namespace,
      name: "repo-sync",
    },
    { verb: "create", resource: "resourcegroups", group: "kpt.dev", namespace },
    { verb: "create", resource: "events", namespace },
    secrets(namespace, "git-creds"),
    secrets(namespace, "git-ca"),
    // Its custom resources' schemas, from their CRDs (current for every match); only reading them.
    { verb: "list", resource: "customresourcedefinitions", group: "apiextensions.k8s.io" },
    { verb: "watch", resource: "customresourcedefinitions", group: "apiextensions.k8s.io" },
  ]);
  await expectAllowed(reconciler, false, [
    { verb: "create", resource: "customresourcedefinitions", group: "apiextensions.k8s.io" },
    { verb: "update", resource: "customresourcedefinitions", group: "apiextensions.k8s.io", name: "x.example.com" },
    { verb: "delete", resource: "customresourcedefinitions", group: "apiextensions.k8s.io", name: "x.example.com" },
    secrets(namespace, "another-secret"),
    secrets(namespace),
    { verb: "list", resource: "secrets", namespace },
    { verb: "watch", resource: "secrets", namespace },
    secrets(elsewhere, "git-creds"),
    secrets(systemNamespace, "git-creds"),
    // What the admin has not granted: nothing to apply, no way to grant itself more or act as another account.
    { verb: "create", resource: "configmaps", namespace },
    { verb: "create", resource: "rolebindings", group: "rbac.authorization.k8s.io", namespace },
    { verb: "create", resource: "roles", group: "rbac.authorization.k8s.io", namespace },
    { verb: "bind", resource: "clusterroles", group: "rbac.authorization.k8s.io", name: "admin" },
    { verb: "create", resource: "pods", namespace },
    { verb: "impersonate", resource: "serviceaccounts", namespace, name: "default" },
    { verb: "create", resource: "serviceaccounts", subresource: "token", namespace, name: "default" },
    { verb: "update", resource: "reposyncs", group: "configsync.gke.io", namespace: elsewhere },
    // No other sync of its namespace, listed or watched.
    { verb: "list", resource: "reposyncs", group: "configsync.gke.io", namespace },
    { verb: "watch", resource: "reposyncs", group: "configsync.gke.io", namespace, name: "other-sync" },
    { verb: "create", resource: "namespaces" },
  ]);

  // The Role follows the spec: another CA Secret replaces the first in it.
  const client = await admin();
  await client.patch(
    Mapping.RepoSync,
    namespace,
    "repo-sync",
    { spec: { git: { caCertSecretRef: { name: "git-ca-2" } } } },
    "merge",
  );
  await eventually(async () => allowed(reconciler, secrets(namespace, "git-ca-2")), { what: "git-ca-2 readable" });
  await expectAllowed(reconciler, false, [secrets(namespace, "git-ca")]);

  // Teardown removes the Role and its binding with the rest of the identity.
  await client.delete(Mapping.RepoSync, namespace, "repo-sync");
  await eventually(
    async () =>
      (await getObject(Mapping.Role, namespace, role)) === undefined &&
      (await getObject(Mapping.RoleBinding, namespace, role)) === undefined,
    { what: `the Role and RoleBinding ${namespace}/${role} removed` },
  );
});

test("a reconciler's ServiceAccount or role binding deleted by hand is set up again at once, not at the next resync", async (t) => {
  const manager = await startManager(t);
  const namespace = await createNamespace(t, "repair");
  const sync = repoSyncObject(namespace, "repo-sync", manager.scope, {
    repo: "https://example.invalid/team.git",
    branch: "main",
  });
  await createSync(t, withSpec(sync, {}, { auth: "token", secretRef: { name: "git-creds" } }));
  const reconciler = `ns-reconciler-${namespace}`;
  const pieces = [
    // Its own: the binding of the Role that reads its Secret, and its ServiceAccount.
    [Mapping.RoleBinding, namespace, secretRoleName(reconciler)],
    [Mapping.ServiceAccount, systemNamespace, reconciler],
    // Shared by the RepoSyncs of the namespace: Config Sync's base role.
    [Mapping.RoleBinding, namespace, "configsync.gke.io:ns-reconciler"],
  ] as const;
  const uid = async (mapping: (typeof pieces)[number][0], ns: string, name: string): Promise<string | undefined> =>
    (await getObject(mapping, ns, name))?.metadata.uid;
  for (const [mapping, ns, name] of pieces)
    await eventually(async () => (await uid(mapping, ns, name)) !== undefined, {
      what: `${mapping.kind} ${ns}/${name}`,
    });
  const client = await admin();
  for (const [mapping, ns, name] of pieces) {
    const before = await uid(mapping, ns, name);
    await client.delete(mapping, ns, name);
    await eventually(
      async () => {
        const now = await uid(mapping, ns, name);
        return now !== undefined && now !== before;
      },
      { timeoutMs: 30_000, what: `${mapping.kind} ${ns}/${name} set up again (the resync is 5 minutes away)` },
    );
  }
});

test("with the namespace admin's RoleBinding to edit, a RepoSync's reconciler applies there and nowhere else", async (t) => {
  const manager = await startManager(t);
  const namespace = await createNamespace(t, "scoped");
  const elsewhere = await createNamespace(t, "elsewhere");
  await grantRepoSyncReconciler(namespace);
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("a", undefined, { v: "1" }));
  await createSync(t, repoSyncObject(namespace, "repo-sync", manager.scope, { repo: repo.url, branch: repo.branch }));
  await synced("RepoSync", namespace, "repo-sync", await repo.commit("v1"));
  const reconciler = `ns-reconciler-${namespace}`;
  await expectAllowed(reconciler, true, [{ verb: "create", resource: "configmaps", namespace }]);
  await expectAllowed(reconciler, false, [
    { verb: "create", resource: "configmaps", namespace: elsewhere },
    secrets(elsewhere),
    { verb: "update", resource: "reposyncs", group: "configsync.gke.io", namespace: elsewhere },
    // No other sync of its namespace, listed or watched.
    { verb: "list", resource: "reposyncs", group: "configsync.gke.io", namespace },
    { verb: "watch", resource: "reposyncs", group: "configsync.gke.io", namespace, name: "other-sync" },
    { verb: "create", resource: "namespaces" },
    { verb: "create", resource: "clusterrolebindings", group: "rbac.authorization.k8s.io" },
    secrets(systemNamespace),
  ]);
});

test("a RepoSync's reconciler without permission for a declared type reports the type and the server's refusal, and syncs once granted", async (t) => {
  const manager = await startManager(t);
  const namespace = await createNamespace(t, "denied");
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("a", undefined, { v: "1" }));
  const commit = await repo.commit("v1");
  await createSync(t, repoSyncObject(namespace, "repo-sync", manager.scope, { repo: repo.url, branch: repo.branch }));
  const errors = await eventually(
    async () => {
      const status = ((await getSync("RepoSync", namespace, "repo-sync"))?.["status"] ?? {}) as {
        sync?: { commit?: string; errors?: { code: string; errorMessage: string }[] };
      };
      return status.sync?.commit === commit && (status.sync.errors ?? []).length > 0 ? status.sync.errors : undefined;
    },
    { timeoutMs: 60_000, what: "the RepoSync to report its sync errors" },
  );
  const message = errors?.[0]?.errorMessage ?? "";
  t.diagnostic(`KNV${errors?.[0]?.code}: ${message}`);
  assert.match(message, /configmaps/, `the error names the type: ${message}`);
  assert.match(message, /forbidden/i, `the error carries the server's refusal: ${message}`);
  assert.match(message, new RegExp(`ns-reconciler-${namespace}`), `the error names who was refused: ${message}`);
  assert.equal(errors?.[0]?.code, "2009", "Config Sync's applier reports a refused type as KNV2009");
  // The object as declared, its version too, as Config Sync's errorResources name it.
  assert.deepEqual((errors?.[0] as { errorResources?: unknown } | undefined)?.errorResources, [
    { sourcePath: "cm.yaml", name: "a", namespace, gvk: { group: "", version: "v1", kind: "ConfigMap" } },
  ]);
  // Granted afterwards, as an admin would: the next poll syncs, with no restart.
  await grantRepoSyncReconciler(namespace);
  await synced("RepoSync", namespace, "repo-sync", commit);
  assert.ok(await getObject(Mapping.ConfigMap, namespace, "a"));
});

/**
 * A Role `configmap-admin` with `verbs` on configmaps in `namespace`, bound to its RepoSync `repo-sync`'s
 * reconciler; returns what gives the Role other verbs.
 */
async function grantConfigMaps(namespace: string, verbs: string[]): Promise<(verbs: string[]) => Promise<void>> {
  const client = await admin();
  const role = (granted: string[]): KubeObject =>
    ({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: "configmap-admin", namespace },
      rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: granted }],
    }) as KubeObject;
  await client.create(Mapping.Role, role(verbs));
  await client.create(Mapping.RoleBinding, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: "syncs-repo", namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "configmap-admin" },
    subjects: [
      { kind: "ServiceAccount", name: reconcilerName("RepoSync", namespace, "repo-sync"), namespace: systemNamespace },
    ],
  } as KubeObject);
  return async (granted) => {
    const current = await client.get(Mapping.Role, namespace, "configmap-admin");
    await client.replace(Mapping.Role, { ...role(granted), metadata: { ...current!.metadata } });
  };
}

test("a RepoSync's reconciler granted Config Sync's verbs (get, list, watch, create, patch, delete; no update) creates, changes, releases and prunes", async (t) => {
  const manager = await startManager(t);
  const namespace = await createNamespace(t, "csverbs");
  await grantConfigMaps(namespace, ["get", "list", "watch", "create", "patch", "delete"]);
  const repo = await TestRepo.create(t);
  await repo.write("a.yaml", configMap("a", undefined, { v: "1" }));
  await repo.write("b.yaml", configMap("b", undefined, { v: "1" }));
  await repo.write(
    "c.yaml",
    configMap("c", undefined, { v: "1" }, { annotations: { "client.lifecycle.config.k8s.io/deletion": "detach" } }),
  );
  await createSync(t, repoSyncObject(namespace, "repo-sync", manager.scope, { repo: repo.url, branch: repo.branch }));
  await synced("RepoSync", namespace, "repo-sync", await repo.commit("three config maps"));

  // A change is a write over the live object: Config Sync patches, so a Role without update must do.
  await repo.write("a.yaml", configMap("a", undefined, { v: "2" }));
  await repo.remove("b.yaml");
  await repo.remove("c.yaml");
  await synced("RepoSync", namespace, "repo-sync", await repo.commit("change a, prune b, release c"));
  assert.deepEqual((await getObject(Mapping.ConfigMap, namespace, "a"))?.["data"], { v: "2" });
  assert.equal(await getObject(Mapping.ConfigMap, namespace, "b"), undefined);
  const released = await getObject(Mapping.ConfigMap, namespace, "c");
  assert.equal(released?.metadata.annotations?.["configmanagement.gke.io/managed"], undefined, "c kept our metadata");
});

test("a RepoSync's reconciler that may read a declared type but not watch it reports the refused watch (KNV2009), and syncs once granted", async (t) => {
  const manager = await startManager(t);
  const namespace = await createNamespace(t, "nowatch");
  const reconciler = reconcilerName("RepoSync", namespace, "repo-sync");
  const regrant = await grantConfigMaps(namespace, ["get", "list", "create", "patch", "delete"]);
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("a", undefined, { v: "1" }));
  const commit = await repo.commit("v1");
  await createSync(t, repoSyncObject(namespace, "repo-sync", manager.scope, { repo: repo.url, branch: repo.branch }));
  // Config Sync's applier fails without watch; the refusal is the server's, with who was refused.
  const refusal = `KNV2009: polling for status failed: configmaps is forbidden: User "system:serviceaccount:${systemNamespace}:${reconciler}" cannot watch resource "configmaps" in API group "" in the namespace "${namespace}"\n\nFor more information, see https://g.co/cloud/acm-errors#knv2009`;
  await eventually(
    async () => {
      const status = ((await getSync("RepoSync", namespace, "repo-sync"))?.["status"] ?? {}) as {
        sync?: { commit?: string; errors?: { code: string; errorMessage: string }[] };
      };
      return status.sync?.commit === commit && (status.sync.errors ?? []).some((e) => e.errorMessage === refusal);
    },
    { timeoutMs: 60_000, what: "the RepoSync to report the refused watch" },
  );
  assert.deepEqual((await getObject(Mapping.ConfigMap, namespace, "a"))?.["data"], { v: "1" }, "a was not applied");
  await regrant(["get", "list", "watch", "create", "patch", "delete"]);
  await synced("RepoSync", namespace, "repo-sync", commit, 120_000);
});

test("a RepoSync's reconciler that may patch but not create reports the refused create naming the object, in Config Sync's words, and syncs once granted", async (t) => {
  const manager = await startManager(t);
  const namespace = await createNamespace(t, "nocreate");
  const reconciler = reconcilerName("RepoSync", namespace, "repo-sync");
  const regrant = await grantConfigMaps(namespace, ["get", "list", "watch", "patch", "delete"]);
  const repo = await TestRepo.create(t);
  await repo.write("cm.yaml", configMap("a", undefined, { v: "1" }));
  const commit = await repo.commit("v1");
  await createSync(t, repoSyncObject(namespace, "repo-sync", manager.scope, { repo: repo.url, branch: repo.branch }));
  // Config Sync creates by server-side apply, a request to the object, so the server's refusal names it.
  const refusal = `KNV2009: failed to apply ConfigMap, ${namespace}/a: configmaps "a" is forbidden: User "system:serviceaccount:${systemNamespace}:${reconciler}" cannot create resource "configmaps" in API group "" in the namespace "${namespace}"\n\nsource: cm.yaml\nnamespace: ${namespace}\nmetadata.name: a\ngroup:\nversion: v1\nkind: ConfigMap\n\nFor more information, see https://g.co/cloud/acm-errors#knv2009`;
  const errors = await eventually(
    async () => {
      const status = ((await getSync("RepoSync", namespace, "repo-sync"))?.["status"] ?? {}) as {
        sync?: { commit?: string; errors?: { code: string; errorMessage: string }[] };
      };
      return status.sync?.commit === commit && (status.sync.errors ?? []).length > 0 ? status.sync.errors : undefined;
    },
    { timeoutMs: 60_000, what: "the RepoSync to report the refused create" },
  );
  assert.deepEqual(
    errors?.map((e) => e.errorMessage),
    [refusal],
  );
  await regrant(["get", "list", "watch", "create", "patch", "delete"]);
  await synced("RepoSync", namespace, "repo-sync", commit, 120_000);
  assert.deepEqual((await getObject(Mapping.ConfigMap, namespace, "a"))?.["data"], { v: "1" });
});

test("a RepoSync's reconciler that may not delete reports the refused prune naming the object in its message only, no errorResources (Config Sync's e2e validateRepoSyncRBAC words), and prunes once granted", async (t) => {
  const manager = await startManager(t);
  const namespace = await createNamespace(t, "nodelete");
  const reconciler = reconcilerName("RepoSync", namespace, "repo-sync");
  const regrant = await grantConfigMaps(namespace, ["get", "list", "watch", "create", "patch"]);
  const repo = await TestRepo.create(t);
  await repo.write("keep.yaml", configMap("keep", undefined, { v: "1" }));
  await repo.write("cm.yaml", configMap("a", undefined, { v: "1" }));
  await createSync(t, repoSyncObject(namespace, "repo-sync", manager.scope, { repo: repo.url, branch: repo.branch }));
  await synced("RepoSync", namespace, "repo-sync", await repo.commit("v1"));
  await repo.remove("cm.yaml");
  const commit = await repo.commit("remove a");
  // The inventory records no version, and Config Sync's prune errors carry no resources: the message names it.
  const refusal = `KNV2009: failed to prune ConfigMap, ${namespace}/a: configmaps "a" is forbidden: User "system:serviceaccount:${systemNamespace}:${reconciler}" cannot delete resource "configmaps" in API group "" in the namespace "${namespace}"\n\nFor more information, see https://g.co/cloud/acm-errors#knv2009`;
  const errors = await eventually(
    async () => {
      const status = ((await getSync("RepoSync", namespace, "repo-sync"))?.["status"] ?? {}) as {
        sync?: { commit?: string; errors?: { code: string; errorMessage: string }[] };
      };
      return status.sync?.commit === commit && (status.sync.errors ?? []).length > 0 ? status.sync.errors : undefined;
    },
    { timeoutMs: 60_000, what: "the RepoSync to report the refused prune" },
  );
  assert.deepEqual(errors, [{ code: "2009", errorMessage: refusal }]);
  assert.ok(await getObject(Mapping.ConfigMap, namespace, "a"), "a is still there");
  await regrant(["get", "list", "watch", "create", "patch", "delete"]);
  await synced("RepoSync", namespace, "repo-sync", commit, 120_000);
  assert.equal(await getObject(Mapping.ConfigMap, namespace, "a"), undefined);
});

test("a RepoSync's roleRefs are refused by the API server under strict field validation, and dropped without it, binding nothing", async (t) => {
  const manager = await startManager(t);
  const namespace = await createNamespace(t, "refs");
  const sync = withSpec(
    repoSyncObject(namespace, "repo-sync", manager.scope, { repo: "https://example.invalid/team.git", branch: "main" }),
    { override: { roleRefs: [{ kind: "ClusterRole", name: "admin" }] } },
  );
  // What `kubectl apply` sends: roleRefs is RootSync-only in Config Sync's CRD, and in driftless's.
  await assert.rejects(
    (await admin()).create(Mapping.RepoSync, sync, { fieldValidation: "Strict" }),
    (error: unknown) =>
      error instanceof KubeApiError &&
      error.status === 400 &&
      error.serverMessage.includes('unknown field "spec.override.roleRefs"'),
  );
  // Without strict validation the server drops the field: the reconciler is set up with its base role only.
  await createSync(t, sync);
  await eventually(
    async () => (await getObject(Mapping.RoleBinding, namespace, "configsync.gke.io:ns-reconciler")) !== undefined,
    { what: "the reconciler's base RoleBinding" },
  );
  const bindings = (await (await admin()).list(Mapping.RoleBinding, { namespace })).items;
  assert.deepEqual(
    bindings
      .filter((b) => (b["roleRef"] as { name?: string } | undefined)?.name === "admin")
      .map((b) => b.metadata.name),
    [],
    "a binding to the roleRef was created",
  );
  assert.equal(
    await allowed(`ns-reconciler-${namespace}`, {
      verb: "create",
      resource: "rolebindings",
      group: "rbac.authorization.k8s.io",
      namespace,
    }),
    false,
  );
});

test("a RootSync's reconciler with roleRefs reads only the Secrets its spec names", async (t) => {
  const manager = await startManager(t);
  const name = `roles-${suffix()}`;
  const sync = rootSyncObject(
    name,
    manager.scope,
    { repo: "https://example.invalid/platform.git", branch: "main" },
    {},
    {
      roleRefs: [{ kind: "ClusterRole", name: "view" }],
    },
  );
  await createSync(t, withSpec(sync, {}, { caCertSecretRef: { name: "platform-ca" } }));
  const reconciler = `root-reconciler-${name}`;
  await eventually(async () => allowed(reconciler, secrets(systemNamespace, "platform-ca")), {
    what: "the named Secret readable",
  });
  await expectAllowed(reconciler, true, [
    {
      verb: "update",
      resource: "rootsyncs",
      subresource: "status",
      group: "configsync.gke.io",
      namespace: systemNamespace,
      name,
    },
    { verb: "get", resource: "configmaps", namespace: "any" },
  ]);
  await expectAllowed(reconciler, false, [
    secrets(systemNamespace, "another-secret"),
    secrets(systemNamespace),
    { verb: "list", resource: "secrets" },
    secrets("any", "platform-ca"),
  ]);
});

/** A binding as Config Sync's e2e validateRoleRefs reads it back into a roleRef: kind, name, and a RoleBinding's namespace. */
function asRoleRef(binding: KubeObject): string {
  const roleRef = binding["roleRef"] as { kind: string; name: string };
  const namespace = binding.kind === "RoleBinding" ? (binding.metadata.namespace ?? "") : "";
  return `${roleRef.kind} ${roleRef.name} ${namespace}`.trim();
}

/** The bindings Config Sync's labels (its ManagedObjectLabelMap) select for a RootSync: its roleRefs' alone. */
async function roleRefBindings(name: string): Promise<string[]> {
  const labelSelector = [
    "app.kubernetes.io/managed-by=reconciler-manager",
    "configsync.gke.io/sync-kind=RootSync",
    `configsync.gke.io/sync-name=${name}`,
    `configsync.gke.io/sync-namespace=${systemNamespace}`,
  ].join(",");
  const client = await admin();
  const bindings = [
    ...(await client.list(Mapping.RoleBinding, { labelSelector })).items,
    ...(await client.list(Mapping.ClusterRoleBinding, { labelSelector })).items,
  ];
  return bindings.map(asRoleRef).sort();
}

test("a RootSync's roleRefs are exactly the bindings Config Sync's labels select, one each (a ClusterRole with a namespace a RoleBinding there), and go with the roleRef (TestRootSyncRoleRefs)", async (t) => {
  const manager = await startManager(t);
  const foo = await createNamespace(t, "foo");
  const name = `roles-${suffix()}`;
  const fake = { repo: "https://example.invalid/platform.git", branch: "main" };
  const roleRefs = [
    { kind: "Role", name: "foo-role", namespace: foo },
    { kind: "ClusterRole", name: "foo-role" },
    { kind: "ClusterRole", name: "bar-role" },
    { kind: "ClusterRole", name: "foo-role", namespace: foo },
  ];
  await createSync(t, rootSyncObject(name, manager.scope, fake, {}, { roleRefs }));
  const reconciler = `root-reconciler-${name}`;
  // Its own-objects Role's binding is set up with the rest: once there, so are the roleRefs' bindings.
  await eventually(
    async () => (await getObject(Mapping.RoleBinding, systemNamespace, syncRoleName(reconciler))) !== undefined,
    {
      what: "the reconciler's bindings",
    },
  );
  assert.deepEqual(await roleRefBindings(name), [
    "ClusterRole bar-role",
    "ClusterRole foo-role",
    `ClusterRole foo-role ${foo}`,
    `Role foo-role ${foo}`,
  ]);

  await (
    await admin()
  ).patch(
    Mapping.RootSync,
    systemNamespace,
    name,
    { spec: { override: { roleRefs: [{ kind: "ClusterRole", name: "foo-role" }] } } },
    "merge",
  );
  await eventually(async () => (await roleRefBindings(name)).length === 1, {
    what: "the dropped roleRefs' bindings gone",
  });
  assert.deepEqual(await roleRefBindings(name), ["ClusterRole foo-role"]);
  const base = await getObject(Mapping.ClusterRoleBinding, undefined, "configsync.gke.io:root-reconciler-base");
  assert.ok(subjectNames(base).includes(reconciler), "not a subject of the base ClusterRoleBinding");
  const legacy = await getObject(Mapping.ClusterRoleBinding, undefined, "configsync.gke.io:root-reconciler");
  assert.ok(!subjectNames(legacy).includes(reconciler), "bound to cluster-admin despite its roleRefs");
});

function subjectNames(binding: KubeObject | undefined): string[] {
  return ((binding?.["subjects"] as { name: string }[] | undefined) ?? []).map((s) => s.name);
}

/** The server's answer to `request` made as a reconciler: "ok", or "forbidden" (anything else fails the test). */
async function answer(request: Promise<unknown>): Promise<"ok" | "forbidden"> {
  try {
    await request;
    return "ok";
  } catch (error) {
    if (isForbidden(error)) return "forbidden";
    throw error;
  }
}

const repoSyncs = (namespace: string, name?: string, subresource?: string): Attributes => ({
  verb: "update",
  resource: "reposyncs",
  group: "configsync.gke.io",
  namespace,
  ...(name === undefined ? {} : { name }),
  ...(subresource === undefined ? {} : { subresource }),
});
const resourceGroups = (verb: string, namespace: string, name?: string, subresource?: string): Attributes => ({
  verb,
  resource: "resourcegroups",
  group: "kpt.dev",
  namespace,
  ...(name === undefined ? {} : { name }),
  ...(subresource === undefined ? {} : { subresource }),
});

/** An annotation the reconciler owns on its sync (packages/sync/src/sync-request.ts). */
const handled = { metadata: { annotations: { "driftless.dev/sync-request-handled": "2026-01-01T00:00:00Z" } } };

/** The merge patches of its own sync a reconciler must be refused, by what each would do; the names of those let through. */
async function letThrough(
  patchOwn: (patch: object) => Promise<"ok" | "forbidden">,
  refused: Readonly<Record<string, object>>,
): Promise<string[]> {
  const through: string[] = [];
  for (const [what, patch] of Object.entries(refused)) if ((await patchOwn(patch)) !== "forbidden") through.push(what);
  return through;
}

test("a RepoSync's reconciler writes its own RepoSync and ResourceGroups, by name, and not its sibling's", async (t) => {
  const manager = await startManager(t);
  const namespace = await createNamespace(t, "own");
  const commits: Record<string, string> = {};
  for (const name of ["repo-sync", "sibling"]) {
    await grantRepoSyncReconciler(namespace, { syncName: name });
    const repo = await TestRepo.create(t);
    await repo.write("cm.yaml", configMap(`from-${name}`, undefined, { v: "1" }));
    commits[name] = await repo.commit("v1");
    await createSync(t, repoSyncObject(namespace, name, manager.scope, { repo: repo.url, branch: repo.branch }));
  }
  // End to end under the narrowed RBAC: each reconciler writes its status and creates its ResourceGroup.
  for (const name of ["repo-sync", "sibling"]) await synced("RepoSync", namespace, name, commits[name] ?? "");
  const reconciler = `ns-reconciler-${namespace}`;

  await expectAllowed(reconciler, true, [
    { ...repoSyncs(namespace, "repo-sync"), verb: "get" },
    repoSyncs(namespace, "repo-sync"),
    { ...repoSyncs(namespace, "repo-sync"), verb: "patch" },
    repoSyncs(namespace, "repo-sync", "status"),
    resourceGroups("get", namespace, "repo-sync"),
    resourceGroups("update", namespace, "repo-sync"),
    resourceGroups("patch", namespace, "repo-sync", "status"),
    resourceGroups("delete", namespace, "repo-sync.pending"),
    resourceGroups("create", namespace),
  ]);
  await expectAllowed(reconciler, false, [
    repoSyncs(namespace, "sibling"),
    { ...repoSyncs(namespace, "sibling"), verb: "patch" },
    repoSyncs(namespace, "sibling", "status"),
    { ...repoSyncs(namespace), verb: "list" },
    { ...repoSyncs(namespace), verb: "watch" },
    resourceGroups("get", namespace, "sibling"),
    resourceGroups("update", namespace, "sibling"),
    resourceGroups("patch", namespace, "sibling"),
    resourceGroups("update", namespace, "sibling", "status"),
    resourceGroups("delete", namespace, "sibling"),
    resourceGroups("delete", namespace, "sibling.pending"),
    resourceGroups("list", namespace),
    resourceGroups("create", "elsewhere"),
  ]);

  // The same as real requests with the reconciler's token: a leaked one cannot repoint the sibling.
  const asReconciler: KubeClient = await clientAs(reconciler);
  const mark = { metadata: { annotations: { "driftless.test/touched": "yes" } } };
  assert.equal(await answer(asReconciler.patch(Mapping.RepoSync, namespace, "repo-sync", handled, "merge")), "ok");
  assert.equal(await answer(asReconciler.get(resourceGroupMapping, namespace, "repo-sync")), "ok");
  assert.equal(await answer(asReconciler.patch(resourceGroupMapping, namespace, "repo-sync", mark, "merge")), "ok");
  const repoint = { spec: { git: { repo: "https://attacker.invalid/other.git" } } };
  assert.equal(
    await answer(asReconciler.patch(Mapping.RepoSync, namespace, "sibling", repoint, "merge")),
    "forbidden",
    "a reconciler repointed its sibling RepoSync",
  );
  assert.equal(await answer(asReconciler.get(resourceGroupMapping, namespace, "sibling")), "forbidden");
  // It watches its own sync: a list by its name's field selector passes, its sibling's or the namespace's does not.
  const own = await asReconciler.list(Mapping.RepoSync, { namespace, fieldSelector: "metadata.name=repo-sync" });
  assert.deepEqual(
    own.items.map((o) => o.metadata.name),
    ["repo-sync"],
  );
  const siblingList = asReconciler.list(Mapping.RepoSync, { namespace, fieldSelector: "metadata.name=sibling" });
  assert.equal(await answer(siblingList), "forbidden");
  assert.equal(await answer(asReconciler.list(Mapping.RepoSync, { namespace })), "forbidden");
  assert.equal(
    await answer(asReconciler.patch(resourceGroupMapping, namespace, "sibling", { spec: { resources: [] } }, "merge")),
    "forbidden",
    "a reconciler emptied its sibling's inventory",
  );
  assert.equal(await answer(asReconciler.delete(resourceGroupMapping, namespace, "sibling")), "forbidden");
  // RBAC lets it create ResourceGroups (no name to check); the admission policy allows only its own names.
  const group = (name: string): KubeObject => ({
    apiVersion: "kpt.dev/v1alpha1",
    kind: "ResourceGroup",
    metadata: { name, namespace },
    spec: { resources: [] },
  });
  for (const name of ["third", "sibling.pending"])
    assert.equal(
      await answer(asReconciler.create(resourceGroupMapping, group(name))),
      "forbidden",
      `a reconciler created the ResourceGroup ${name}`,
    );
  assert.equal(await answer(asReconciler.create(resourceGroupMapping, group("repo-sync.pending"))), "ok");
  await (await admin()).delete(resourceGroupMapping, namespace, "repo-sync.pending");
  const sibling = await getSync("RepoSync", namespace, "sibling");
  assert.notEqual((sibling?.["spec"] as { git?: { repo?: string } }).git?.repo, repoint.spec.git.repo);
  assert.ok(await getObject(resourceGroupMapping, namespace, "sibling"), "the sibling's ResourceGroup is gone");

  // Teardown removes the Role and its binding with the rest of the identity.
  assert.ok(await getObject(Mapping.Role, namespace, syncRoleName(reconciler)), "no Role of its own objects");
  await (await admin()).delete(Mapping.RepoSync, namespace, "repo-sync");
  await eventually(
    async () =>
      (await getObject(Mapping.Role, namespace, syncRoleName(reconciler))) === undefined &&
      (await getObject(Mapping.RoleBinding, namespace, syncRoleName(reconciler))) === undefined,
    { what: "the reconciler's own-objects Role and RoleBinding removed" },
  );
});

test("a RootSync's reconciler with roleRefs writes its own RootSync and ResourceGroups, and no other RootSync's", async (t) => {
  const manager = await startManager(t);
  const restricted = `scoped-${suffix()}`;
  const other = `admin-${suffix()}`;
  const fake = { repo: "https://example.invalid/platform.git", branch: "main" };
  await createSync(
    t,
    rootSyncObject(restricted, manager.scope, fake, {}, { roleRefs: [{ kind: "ClusterRole", name: "view" }] }),
  );
  await createSync(t, rootSyncObject(other, manager.scope, fake));
  const reconciler = `root-reconciler-${restricted}`;
  const rootSyncs = (verb: string, name?: string, subresource?: string): Attributes => ({
    verb,
    resource: "rootsyncs",
    group: "configsync.gke.io",
    namespace: systemNamespace,
    ...(name === undefined ? {} : { name }),
    ...(subresource === undefined ? {} : { subresource }),
  });
  await eventually(async () => allowed(reconciler, rootSyncs("update", restricted)), {
    what: "the restricted RootSync's reconciler allowed to update its RootSync",
  });
  await expectAllowed(reconciler, true, [
    rootSyncs("get", restricted),
    rootSyncs("patch", restricted),
    rootSyncs("update", restricted, "status"),
    resourceGroups("update", systemNamespace, restricted),
    resourceGroups("delete", systemNamespace, `${restricted}.pending`),
    resourceGroups("create", systemNamespace),
  ]);
  await expectAllowed(reconciler, false, [
    rootSyncs("update", other),
    rootSyncs("patch", other),
    rootSyncs("update", other, "status"),
    rootSyncs("update", "root-sync"),
    rootSyncs("list"),
    resourceGroups("update", systemNamespace, other),
    resourceGroups("patch", systemNamespace, other, "status"),
    resourceGroups("delete", systemNamespace, other),
    resourceGroups("create", "any"),
    { ...repoSyncs("any"), verb: "patch" },
  ]);
  const asReconciler = await clientAs(reconciler);
  const repoint = { spec: { git: { repo: "https://attacker.invalid/other.git" } } };
  assert.equal(
    await answer(asReconciler.patch(Mapping.RootSync, systemNamespace, other, repoint, "merge")),
    "forbidden",
    "a restricted root reconciler repointed another RootSync",
  );
  assert.equal(await answer(asReconciler.patch(Mapping.RootSync, systemNamespace, restricted, handled, "merge")), "ok");
  // RBAC lets it create ResourceGroups (no name to check); the admission policy allows only its own two, so it
  // cannot take the name of another RootSync's group, a future RootSync's, or the cluster-admin root-sync's.
  const group = (name: string): KubeObject => ({
    apiVersion: "kpt.dev/v1alpha1",
    kind: "ResourceGroup",
    metadata: { name, namespace: systemNamespace },
    spec: { resources: [] },
  });
  const created: string[] = [];
  t.after(async () => {
    for (const name of created) await (await admin()).delete(resourceGroupMapping, systemNamespace, name);
  });
  const createAs = async (name: string): Promise<"ok" | "forbidden"> => {
    const result = await answer(asReconciler.create(resourceGroupMapping, group(name)));
    if (result === "ok") created.push(name);
    return result;
  };
  for (const name of [`${other}.pending`, `later-${suffix()}`, "root-sync", "root-sync.pending"])
    assert.equal(await createAs(name), "forbidden", `a restricted root reconciler created the ResourceGroup ${name}`);
  assert.equal(await createAs(`${restricted}.pending`), "ok");
});

test("a root reconciler restricted by roleRefs cannot drop them (nor change its spec or others' metadata on its RootSync); it writes its finalizer, its annotations and status", async (t) => {
  const manager = await startManager(t);
  const name = `scoped-${suffix()}`;
  const fake = { repo: "https://example.invalid/platform.git", branch: "main" };
  const owner = { "team.example/owner": "platform" };
  await createSync(
    t,
    rootSyncObject(name, manager.scope, fake, owner, { roleRefs: [{ kind: "ClusterRole", name: "view" }] }),
  );
  const reconciler = `root-reconciler-${name}`;
  const nuke: Attributes = { verb: "delete", resource: "namespaces", name: "kube-system" };
  // Set up once the manager holds its finalizer (the reconciler must not be able to drop that either).
  await eventually(
    async () =>
      ((await getSync("RootSync", systemNamespace, name))?.metadata.finalizers ?? []).includes(managerFinalizer) &&
      (await allowed(reconciler, {
        verb: "patch",
        resource: "rootsyncs",
        group: "configsync.gke.io",
        namespace: systemNamespace,
        name,
      })),
    { what: "the restricted reconciler's identity and the manager's finalizer" },
  );
  assert.equal(await allowed(reconciler, nuke), false, "precondition: the reconciler is restricted");
  const asReconciler = await clientAs(reconciler);
  const patchOwn = (patch: object): Promise<"ok" | "forbidden"> =>
    answer(asReconciler.patch(Mapping.RootSync, systemNamespace, name, patch, "merge"));
  const through = await letThrough(patchOwn, {
    "dropped spec.override.roleRefs": { spec: { override: { roleRefs: null } } },
    "changed spec.sourceFormat": { spec: { sourceFormat: "hierarchy" } },
    "repointed spec.git.repo": { spec: { git: { repo: "https://attacker.invalid/other.git" } } },
    "suspended itself": { metadata: { annotations: { "driftless.dev/suspend": "true" } } },
    "set its deletion propagation": {
      metadata: { annotations: { "configsync.gke.io/deletion-propagation-policy": "Foreground" } },
    },
    "removed another's annotation": { metadata: { annotations: { "team.example/owner": null } } },
    "left its manager's label scope": {
      metadata: { labels: Object.fromEntries(Object.keys(manager.scope.labels).map((k) => [k, null])) },
    },
    "dropped the manager's finalizer": { metadata: { finalizers: [] } },
  });
  assert.deepEqual(through, [], `the reconciler's own writes let through: ${through.join("; ")}`);
  assert.equal(await answer(asReconciler.delete(Mapping.RootSync, systemNamespace, name)), "forbidden");
  // A spec sent to /status is dropped by the server: status is no way around the policy.
  const viaStatus = { spec: { override: { roleRefs: null } }, status: {} };
  assert.equal(
    await answer(
      asReconciler.patch(Mapping.RootSync, systemNamespace, name, viaStatus, "merge", { subresource: "status" }),
    ),
    "ok",
  );
  const live = await getSync("RootSync", systemNamespace, name);
  assert.deepEqual((live?.["spec"] as { override?: unknown }).override, {
    roleRefs: [{ kind: "ClusterRole", name: "view" }],
  });
  assert.equal(live?.metadata.annotations?.["team.example/owner"], "platform");
  assert.equal(await allowed(reconciler, nuke), false, "the restricted reconciler became cluster-admin");

  // What the reconciler does write on its RootSync: its finalizer, its annotations and ApplySet label.
  const finalizers = live?.metadata.finalizers ?? [];
  const without = finalizers.filter((f) => f !== reconcilerFinalizer);
  assert.equal(await patchOwn({ metadata: { finalizers: [...without, reconcilerFinalizer] } }), "ok");
  assert.equal(await patchOwn({ metadata: { finalizers: without } }), "ok");
  assert.equal(
    await patchOwn({
      metadata: {
        annotations: {
          "driftless.dev/sync-request-handled": "2026-01-01T00:00:00Z",
          "configsync.gke.io/image-to-sync": "registry.example/app@sha256:0",
          "applyset.kubernetes.io/tooling": "configsync.gke.io/v1",
          "configsync.gke.io/requires-rendering": "true",
        },
        labels: { "applyset.kubernetes.io/id": "applyset-test-v1" },
      },
    }),
    "ok",
  );
});

test("a RepoSync's reconciler cannot repoint its own RepoSync or widen what it manages", async (t) => {
  const manager = await startManager(t);
  const namespace = await createNamespace(t, "self");
  await createSync(
    t,
    repoSyncObject(namespace, "repo-sync", manager.scope, { repo: "https://example.invalid/team.git", branch: "main" }),
  );
  const reconciler = `ns-reconciler-${namespace}`;
  await eventually(async () => allowed(reconciler, { ...repoSyncs(namespace, "repo-sync"), verb: "patch" }), {
    what: "the reconciler's own Role",
  });
  const asReconciler = await clientAs(reconciler);
  const through = await letThrough(
    (patch) => answer(asReconciler.patch(Mapping.RepoSync, namespace, "repo-sync", patch, "merge")),
    {
      "repointed spec.git.repo": { spec: { git: { repo: "https://attacker.invalid/other.git" } } },
      "set spec.override.resources": {
        spec: { override: { resources: [{ containerName: "reconciler", memoryLimit: "64Gi" }] } },
      },
      "suspended itself": { metadata: { annotations: { "driftless.dev/suspend": "true" } } },
      "allowed an empty source": { metadata: { annotations: { "configsync.gke.io/allow-empty-source": "true" } } },
      "enabled shell in rendering": { spec: { override: { enableShellInRendering: true } } },
      "enabled shell in rendering beside requires-rendering": {
        metadata: { annotations: { "configsync.gke.io/requires-rendering": "true" } },
        spec: { override: { enableShellInRendering: true } },
      },
    },
  );
  assert.deepEqual(through, [], `the reconciler's own writes let through: ${through.join("; ")}`);
  assert.equal(await answer(asReconciler.delete(Mapping.RepoSync, namespace, "repo-sync")), "forbidden");
  // What it does write: whether its source needs rendering (the manager then adds the render container).
  for (const value of ["true", "false"])
    assert.equal(
      await answer(
        asReconciler.patch(
          Mapping.RepoSync,
          namespace,
          "repo-sync",
          { metadata: { annotations: { "configsync.gke.io/requires-rendering": value } } },
          "merge",
        ),
      ),
      "ok",
      `requires-rendering: "${value}"`,
    );
  const live = await getSync("RepoSync", namespace, "repo-sync");
  assert.equal((live?.["spec"] as { git?: { repo?: string } }).git?.repo, "https://example.invalid/team.git");
  assert.equal(
    (live?.["spec"] as { override?: { enableShellInRendering?: boolean } }).override?.enableShellInRendering,
    undefined,
  );
});

test("the reconciler write policy holds a reconciler on its own sync only: a root reconciler changes the RepoSync and RootSync it manages from Git", async (t) => {
  const manager = await startManager(t);
  const name = `parent-${suffix()}`;
  const fake = { repo: "https://example.invalid/platform.git", branch: "main" };
  await createSync(t, rootSyncObject(name, manager.scope, fake));
  const reconciler = `root-reconciler-${name}`;
  // Children a root repository declares; outside this manager's scope, so nothing runs for them.
  const namespace = await createNamespace(t, "child");
  const childRepoSync = repoSyncObject(namespace, "repo-sync", manager.scope, fake);
  await createSync(t, { ...childRepoSync, metadata: { ...childRepoSync.metadata, labels: {} } });
  const childName = `child-${suffix()}`;
  const childRootSync = rootSyncObject(childName, manager.scope, fake);
  await createSync(t, { ...childRootSync, metadata: { ...childRootSync.metadata, labels: {} } });
  await eventually(
    async () =>
      allowed(reconciler, {
        verb: "patch",
        resource: "reposyncs",
        group: "configsync.gke.io",
        namespace,
        name: "repo-sync",
      }),
    { what: "the root reconciler's identity" },
  );
  const asReconciler = await clientAs(reconciler);
  const change = { spec: { git: { dir: "teams/a" } }, metadata: { annotations: { "team.example/owner": "a" } } };
  assert.equal(await answer(asReconciler.patch(Mapping.RepoSync, namespace, "repo-sync", change, "merge")), "ok");
  assert.equal(await answer(asReconciler.patch(Mapping.RootSync, systemNamespace, childName, change, "merge")), "ok");
  // Its own RootSync stays out of its reach.
  assert.equal(
    await answer(asReconciler.patch(Mapping.RootSync, systemNamespace, name, { spec: { git: { dir: "x" } } }, "merge")),
    "forbidden",
  );
});

test("the reconciler write policy names the finalizer, label, annotations and ServiceAccounts the code uses", async () => {
  const text = await readFile(join(findRepoRoot(), "manifests", "reconciler-admission-policy.yaml"), "utf8");
  const [policy, binding] = parseAllDocuments(text).map((d) => d.toJS() as KubeObject);
  const spec = policy?.["spec"] as {
    variables: { name: string; expression: string }[];
    matchConditions: { expression: string }[];
  };
  const variable = (name: string): string => spec.variables.find((v) => v.name === name)?.expression ?? "";
  assert.equal(policy?.metadata.name, ReconcilerWritePolicyName);
  assert.equal((binding?.["spec"] as { policyName?: string }).policyName, ReconcilerWritePolicyName);
  assert.equal(variable("ownFinalizer"), `'${Finalizer.Reconciler}'`);
  assert.equal(variable("ownLabels"), `['${ApplySetLabel.Id}']`);
  assert.equal(
    variable("ownAnnotations"),
    `[${[
      ApplySetAnnotation.Tooling,
      SyncAnnotation.ImageToSync,
      SyncAnnotation.SyncRequestHandled,
      SyncAnnotation.RequiresRendering,
      SyncAnnotation.DynamicNsSelectorEnabled,
    ]
      .map((k) => `'${k}'`)
      .join(", ")}]`,
  );
  // The match condition builds the writer's expected name as reconcilerName does.
  const who = spec.matchConditions[0]?.expression ?? "";
  assert.ok(who.includes(`'system:serviceaccount:${systemNamespace}:'`), who);
  assert.ok(who.includes(`'${reconcilerName("RootSync", systemNamespace, "root-sync")}'`), who);
  assert.ok(who.includes(`'${reconcilerName("RootSync", systemNamespace, "x").replace(/x$/, "")}'`), who);
  assert.ok(who.includes(`'${reconcilerName("RepoSync", "x", "repo-sync").replace(/x$/, "")}'`), who);
});

/** The rules of every Role and ClusterRole in `files` (under manifests/). */
async function roleRules(files: readonly string[]): Promise<{ resources?: string[]; verbs?: string[] }[]> {
  const dir = join(findRepoRoot(), "manifests");
  const rules: { resources?: string[]; verbs?: string[] }[] = [];
  for (const file of files)
    for (const doc of parseAllDocuments(await readFile(join(dir, file), "utf8"))) {
      const obj = doc.toJS() as KubeObject;
      if (obj.kind === "Role" || obj.kind === "ClusterRole") rules.push(...((obj["rules"] ?? []) as typeof rules));
    }
  return rules;
}

test("the shipped manifests (deployment mode: pods get their tokens from the kubelet) grant no ServiceAccount token requests; process mode's manager-process-rbac.yaml grants the manager them", async () => {
  const dir = join(findRepoRoot(), "manifests");
  const kustomization = parse(await readFile(join(dir, "kustomization.yaml"), "utf8")) as { resources: string[] };
  const mintsTokens = (rules: { resources?: string[]; verbs?: string[] }[]): boolean =>
    rules.some((r) => (r.resources ?? []).includes("serviceaccounts/token") && (r.verbs ?? []).includes("create"));
  assert.equal(mintsTokens(await roleRules(kustomization.resources)), false);
  assert.ok(!kustomization.resources.includes("manager-process-rbac.yaml"));
  assert.equal(mintsTokens(await roleRules(["manager-process-rbac.yaml"])), true);
});

test("every file of manifests/kustomization.yaml is accepted by the API server (server-side dry run)", async () => {
  await managerKubeconfig(); // the namespace must exist for namespaced dry runs
  const dir = join(findRepoRoot(), "manifests");
  const kustomization = parse(await readFile(join(dir, "kustomization.yaml"), "utf8")) as { resources: string[] };
  const client = await admin();
  const kinds: string[] = [];
  for (const file of kustomization.resources) {
    for (const doc of parseAllDocuments(await readFile(join(dir, file), "utf8"))) {
      const obj = doc.toJS() as KubeObject;
      const m = await mappingOf(obj.apiVersion, obj.kind);
      await client.patch(m, m.namespaced ? obj.metadata.namespace : undefined, obj.metadata.name, obj, "apply", {
        fieldManager: "driftless-tests",
        force: true,
        dryRun: true,
        fieldValidation: "Strict",
      });
      kinds.push(obj.kind);
    }
  }
  for (const kind of [
    "CustomResourceDefinition",
    "Namespace",
    "ServiceAccount",
    "ClusterRole",
    "Role",
    "Deployment",
    "Service",
  ]) {
    assert.ok(kinds.includes(kind), `manifests/ has no ${kind}`);
  }
});
