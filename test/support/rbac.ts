/**
 * What a namespace's admin does for a RepoSync, as Config Sync documents it: a RoleBinding in the
 * namespace granting the reconciler's ServiceAccount (config-management-system/ns-reconciler-…) a
 * role. The manager gives a namespace reconciler its base role only; this is what lets it apply.
 * Also what a namespace's tenant may do with RepoSyncs, for tests run as the ordinary user.
 */
import { nsReconcilerName, RootSyncNamespace } from "@driftless/api";
import { KubeClient, type KubeObject, type ResourceMapping } from "@driftless/kube";
import { testEnv } from "./env.ts";

export interface GrantOptions {
  /** The RepoSync's name (default `repo-sync`). */
  readonly syncName?: string;
  /** The ClusterRole bound in the namespace (default `edit`). */
  readonly clusterRole?: string;
}

const roleBindings: ResourceMapping = {
  group: "rbac.authorization.k8s.io",
  version: "v1",
  kind: "RoleBinding",
  resource: "rolebindings",
  namespaced: true,
  verbs: ["create"],
};

/** The admin's RoleBinding for a RepoSync's reconciler, to `edit` unless told. */
export function repoSyncGrant(namespace: string, options: GrantOptions = {}): KubeObject {
  const syncName = options.syncName ?? "repo-sync";
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: `syncs-${syncName}`, namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: options.clusterRole ?? "edit" },
    subjects: [{ kind: "ServiceAccount", name: nsReconcilerName(namespace, syncName), namespace: RootSyncNamespace }],
  };
}

let admin: Promise<KubeClient> | undefined;

/** Creates `repoSyncGrant` as the admin: by the `client` given, else the test run's admin. */
export async function grantRepoSyncReconciler(
  namespace: string,
  options: GrantOptions & { readonly client?: KubeClient } = {},
): Promise<void> {
  // Benchmarks give their own client: they have no test environment to read.
  const client = options.client ?? (await (admin ??= KubeClient.fromKubeconfig(testEnv().kubeconfig)));
  await client.create(roleBindings, repoSyncGrant(namespace, options));
}

const roles: ResourceMapping = { ...roleBindings, kind: "Role", resource: "roles" };

/** Lets the test run's ordinary user do `verbs` on RepoSyncs in `namespace`, and nothing else. */
export async function grantUserRepoSyncs(namespace: string, verbs: readonly string[]): Promise<void> {
  const client = await (admin ??= KubeClient.fromKubeconfig(testEnv().kubeconfig));
  await client.create(roles, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: "user-reposyncs", namespace },
    rules: [{ apiGroups: ["configsync.gke.io"], resources: ["reposyncs"], verbs: [...verbs] }],
  } as KubeObject);
  await client.create(roleBindings, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: "user-reposyncs", namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "user-reposyncs" },
    subjects: [{ kind: "User", name: testEnv().userName, apiGroup: "rbac.authorization.k8s.io" }],
  } as KubeObject);
}

/** Binds the test run's ordinary user to `edit` in `namespace`, as a namespace's tenant is. */
export async function grantUserEdit(namespace: string): Promise<void> {
  const client = await (admin ??= KubeClient.fromKubeconfig(testEnv().kubeconfig));
  await client.create(roleBindings, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: "user-edit", namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "edit" },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: testEnv().userName }],
  } as KubeObject);
}
