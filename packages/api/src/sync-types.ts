/**
 * RootSync and RepoSync (`configsync.gke.io/v1beta1`, also served as v1alpha1) as TypeScript
 * types. Field names and optionality follow Config Sync's API so its YAML reads unchanged;
 * driftless syncs all three of its sources: git, oci and helm.
 */
import type { Kind } from "./groups.ts";
import type { ObjectMeta } from "./object-meta.ts";
import type { SourceFormat, SourceType } from "./defaults.ts";
import type { RepoSyncStatus, RootSyncStatus } from "./sync-status-types.ts";

/** Every auth type Config Sync knows for spec.git.auth. */
export const GitAuthType = {
  None: "none",
  Ssh: "ssh",
  Token: "token",
  CookieFile: "cookiefile",
  GceNode: "gcenode",
  GcpServiceAccount: "gcpserviceaccount",
  K8sServiceAccount: "k8sserviceaccount",
  GithubApp: "githubapp",
} as const;
export type GitAuthType = (typeof GitAuthType)[keyof typeof GitAuthType];

/** Git auth types driftless implements; the rest are valid Config Sync but refused with a clear error. */
export const SupportedGitAuthTypes: readonly GitAuthType[] = [
  GitAuthType.None,
  GitAuthType.Token,
  GitAuthType.Ssh,
  GitAuthType.CookieFile,
];

/** Auth types that read credentials from spec.git.secretRef (and so require it). */
export const GitAuthTypesWithSecret: readonly GitAuthType[] = [
  GitAuthType.Ssh,
  GitAuthType.Token,
  GitAuthType.CookieFile,
  GitAuthType.GithubApp,
];

/** Auth types for which spec.git.proxy has an effect. */
export const GitAuthTypesWithProxy: readonly GitAuthType[] = [
  GitAuthType.None,
  GitAuthType.CookieFile,
  GitAuthType.Token,
];

export const OciAuthType = {
  None: "none",
  /** driftless only: basic credentials (Secret keys `username`, `password`) from spec.oci.secretRef. */
  Token: "token",
  GceNode: "gcenode",
  GcpServiceAccount: "gcpserviceaccount",
  K8sServiceAccount: "k8sserviceaccount",
} as const;
export type OciAuthType = (typeof OciAuthType)[keyof typeof OciAuthType];

export const HelmAuthType = {
  None: "none",
  Token: "token",
  GceNode: "gcenode",
  GcpServiceAccount: "gcpserviceaccount",
  K8sServiceAccount: "k8sserviceaccount",
} as const;
export type HelmAuthType = (typeof HelmAuthType)[keyof typeof HelmAuthType];

export interface SecretReference {
  readonly name?: string;
}

export interface GitSpec {
  /** Clone URL (https://, ssh://, git@host:path, file://). */
  readonly repo: string;
  /** Defaults to `master`. Ignored when `revision` is set to anything but `HEAD`. */
  readonly branch?: string;
  /** Tag, ref or commit SHA. Defaults to `HEAD` (the tip of `branch`). */
  readonly revision?: string;
  /** Directory inside the repository to read; defaults to the root. */
  readonly dir?: string;
  /** Go duration between polls, e.g. `15s`, `1m30s`. Defaults to 15s. */
  readonly period?: string;
  readonly auth: GitAuthType;
  /** For auth `gcpserviceaccount`. */
  readonly gcpServiceAccountEmail?: string;
  /** HTTPS proxy URL; only meaningful with auth none, cookiefile or token. */
  readonly proxy?: string;
  /** Secret in the sync's namespace holding the credentials (keys depend on `auth`). */
  readonly secretRef?: SecretReference | null;
  readonly noSSLVerify?: boolean;
  /** Secret with a `cert` key: a CA bundle to trust for the Git server. */
  readonly caCertSecretRef?: SecretReference | null;
}

export interface OciSpec {
  readonly image: string;
  readonly dir?: string;
  readonly period?: string;
  readonly auth: OciAuthType;
  readonly gcpServiceAccountEmail?: string;
  /** driftless only, with auth `token`: a Secret with keys `username` and `password`. */
  readonly secretRef?: SecretReference | null;
  readonly caCertSecretRef?: SecretReference | null;
}

export interface ValuesFileRef {
  /** ConfigMap name in the sync's namespace. */
  readonly name?: string;
  /** Key in the ConfigMap; defaults to `values.yaml`. */
  readonly dataKey?: string;
}

export interface HelmBase {
  readonly repo: string;
  readonly chart: string;
  readonly version?: string;
  readonly releaseName?: string;
  /** Arbitrary JSON: chart values. */
  readonly values?: unknown;
  readonly valuesFileRefs?: readonly ValuesFileRef[];
  readonly includeCRDs?: boolean;
  readonly period?: string;
  readonly auth: HelmAuthType;
  readonly gcpServiceAccountEmail?: string;
  readonly secretRef?: SecretReference | null;
  readonly caCertSecretRef?: SecretReference | null;
}

export interface HelmRootSyncSpec extends HelmBase {
  /** Release namespace; mutually exclusive with deployNamespace. */
  readonly namespace?: string;
  readonly deployNamespace?: string;
}

export type HelmRepoSyncSpec = HelmBase;

/** A resource quantity as Kubernetes accepts it: `100m`, `1Gi`, or a number. */
export type Quantity = string | number;

export interface ContainerResourcesSpec {
  /** reconciler, git-sync, hydration-controller, oci-sync, helm-sync, ... */
  readonly containerName?: string;
  readonly cpuRequest?: Quantity;
  readonly memoryRequest?: Quantity;
  readonly cpuLimit?: Quantity;
  readonly memoryLimit?: Quantity;
}

export interface ContainerLogLevelOverride {
  readonly containerName: string;
  /** 0..10 */
  readonly logLevel: number;
}

export const NamespaceStrategy = {
  /** Namespaces used but not declared are created by the reconciler (the default). */
  Implicit: "implicit",
  /** Only declared Namespaces are created. */
  Explicit: "explicit",
} as const;
export type NamespaceStrategy = (typeof NamespaceStrategy)[keyof typeof NamespaceStrategy];

export const RoleRefKind = { Role: "Role", ClusterRole: "ClusterRole" } as const;
export type RoleRefKind = (typeof RoleRefKind)[keyof typeof RoleRefKind];

/** A Role or ClusterRole by name. */
export interface RoleRef {
  readonly kind: RoleRefKind;
  readonly name: string;
}

/** A role a RootSync reconciler is bound to; `namespace` makes it a RoleBinding (required for kind Role). */
export interface RootSyncRoleRef extends RoleRef {
  readonly namespace?: string;
}

export interface OverrideSpec {
  readonly resources?: readonly ContainerResourcesSpec[];
  /** 0 = full clone; > 0 = shallow clone of that depth; unset = chosen automatically. */
  readonly gitSyncDepth?: number;
  /** `enabled` records per-object actuation status in the ResourceGroup. */
  readonly statusMode?: "enabled" | "disabled" | "";
  /** Go duration: how long to wait for applied objects to become Current. Default 5m. */
  readonly reconcileTimeout?: string;
  /** Go duration: client-side timeout of one API request. Default 15s. */
  readonly apiServerTimeout?: string;
  readonly enableShellInRendering?: boolean;
  readonly logLevels?: readonly ContainerLogLevelOverride[];
}

export interface RootSyncOverrideSpec extends OverrideSpec {
  /** Replaces the default cluster-admin binding of the root reconciler. */
  readonly roleRefs?: readonly RootSyncRoleRef[];
  readonly namespaceStrategy?: NamespaceStrategy;
}

/** No roleRefs, as in Config Sync: the namespace's admin grants a namespace reconciler its permissions. */
export type RepoSyncOverrideSpec = OverrideSpec;

interface SyncSpecBase {
  readonly sourceFormat?: SourceFormat | "";
  readonly sourceType?: SourceType;
  readonly git?: GitSpec;
  readonly oci?: OciSpec;
}

export interface RootSyncSpec extends SyncSpecBase {
  readonly helm?: HelmRootSyncSpec;
  readonly override?: RootSyncOverrideSpec | null;
}

export interface RepoSyncSpec extends SyncSpecBase {
  readonly helm?: HelmRepoSyncSpec;
  readonly override?: RepoSyncOverrideSpec | null;
}

export interface RootSync {
  readonly apiVersion: string;
  readonly kind: typeof Kind.RootSync;
  readonly metadata: ObjectMeta;
  readonly spec: RootSyncSpec;
  readonly status?: RootSyncStatus;
}

export interface RepoSync {
  readonly apiVersion: string;
  readonly kind: typeof Kind.RepoSync;
  readonly metadata: ObjectMeta;
  readonly spec: RepoSyncSpec;
  readonly status?: RepoSyncStatus;
}

/** Either kind of sync; narrow on `kind`. */
export type RSync = RootSync | RepoSync;
