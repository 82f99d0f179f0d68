/**
 * The kinds the manager reads and writes, as REST mappings. The manager never needs discovery:
 * these are built-in or our own CRDs, at versions every supported cluster serves.
 */
import { ConfigSyncGroup, ConfigSyncVersion, Kind, Plural, type SyncKind } from "@driftless/api";
import type { ResourceMapping } from "@driftless/kube";

const verbs = ["get", "list", "watch", "create", "update", "patch", "delete"] as const;

function mapping(group: string, version: string, kind: string, resource: string, namespaced: boolean): ResourceMapping {
  return { group, version, kind, resource, namespaced, verbs };
}

export const Resource = {
  RootSync: mapping(ConfigSyncGroup, ConfigSyncVersion.V1Beta1, Kind.RootSync, Plural.RootSync, true),
  RepoSync: mapping(ConfigSyncGroup, ConfigSyncVersion.V1Beta1, Kind.RepoSync, Plural.RepoSync, true),
  Namespace: mapping("", "v1", "Namespace", "namespaces", false),
  ServiceAccount: mapping("", "v1", "ServiceAccount", "serviceaccounts", true),
  Deployment: mapping("apps", "v1", "Deployment", "deployments", true),
  Pod: mapping("", "v1", "Pod", "pods", true),
  Secret: mapping("", "v1", "Secret", "secrets", true),
  Role: mapping("rbac.authorization.k8s.io", "v1", "Role", "roles", true),
  RoleBinding: mapping("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", true),
  ClusterRoleBinding: mapping("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", false),
  Lease: mapping("coordination.k8s.io", "v1", "Lease", "leases", true),
  CustomResourceDefinition: mapping(
    "apiextensions.k8s.io",
    "v1",
    "CustomResourceDefinition",
    "customresourcedefinitions",
    false,
  ),
} as const;

export function syncMapping(kind: SyncKind): ResourceMapping {
  return kind === Kind.RootSync ? Resource.RootSync : Resource.RepoSync;
}
