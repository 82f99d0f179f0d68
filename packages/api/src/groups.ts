/**
 * API groups, versions, kinds and resource names of the objects driftless owns. The strings are
 * Config Sync's, so existing RootSync, RepoSync and ResourceGroup objects are ours unchanged.
 */

export const ConfigSyncGroup = "configsync.gke.io" as const;
export const KptGroup = "kpt.dev" as const;

/** Versions served for RootSync/RepoSync. v1beta1 is stored; v1alpha1 has the same schema. */
export const ConfigSyncVersion = {
  V1Beta1: "v1beta1",
  V1Alpha1: "v1alpha1",
} as const;
export type ConfigSyncVersion = (typeof ConfigSyncVersion)[keyof typeof ConfigSyncVersion];

export const KptVersion = {
  V1Alpha1: "v1alpha1",
} as const;

/** The apiVersion strings written on objects. */
export const ApiVersion = {
  ConfigSyncV1Beta1: `${ConfigSyncGroup}/${ConfigSyncVersion.V1Beta1}`,
  ConfigSyncV1Alpha1: `${ConfigSyncGroup}/${ConfigSyncVersion.V1Alpha1}`,
  KptV1Alpha1: `${KptGroup}/${KptVersion.V1Alpha1}`,
} as const;
export type ApiVersion = (typeof ApiVersion)[keyof typeof ApiVersion];

export const Kind = {
  RootSync: "RootSync",
  RepoSync: "RepoSync",
  ResourceGroup: "ResourceGroup",
} as const;
export type Kind = (typeof Kind)[keyof typeof Kind];

/** The two kinds a reconciler can serve. */
export type SyncKind = typeof Kind.RootSync | typeof Kind.RepoSync;

/** Plural resource names, as used in REST paths and RBAC rules. */
export const Plural = {
  RootSync: "rootsyncs",
  RepoSync: "reposyncs",
  ResourceGroup: "resourcegroups",
} as const;
export type Plural = (typeof Plural)[keyof typeof Plural];

export const Singular = {
  RootSync: "rootsync",
  RepoSync: "reposync",
  ResourceGroup: "resourcegroup",
} as const;

/** CustomResourceDefinition names (`<plural>.<group>`). */
export const CrdName = {
  RootSync: `${Plural.RootSync}.${ConfigSyncGroup}`,
  RepoSync: `${Plural.RepoSync}.${ConfigSyncGroup}`,
  ResourceGroup: `${Plural.ResourceGroup}.${KptGroup}`,
} as const;
export type CrdName = (typeof CrdName)[keyof typeof CrdName];

export function isSyncKind(kind: unknown): kind is SyncKind {
  return kind === Kind.RootSync || kind === Kind.RepoSync;
}
