/**
 * What a namespace's admin does for a RepoSync, as Config Sync documents it: a RoleBinding in the
 * namespace granting the reconciler's ServiceAccount (config-management-system/ns-reconciler-…) a
 * role. The manager gives a namespace reconciler its base role only; this is what lets it apply.
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
