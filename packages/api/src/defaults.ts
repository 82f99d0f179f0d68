/**
 * Well-known names, defaults and limits. Values follow Config Sync so that a RootSync or RepoSync
 * written for it behaves the same here when fields are left out.
 */

/** The only namespace a RootSync may live in; also where reconciler workloads run. */
export const RootSyncNamespace = "config-management-system" as const;

/** RootSync name that keeps the short reconciler name `root-reconciler` and the `:root` manager. */
export const DefaultRootSyncName = "root-sync" as const;
/** RepoSync name that keeps the short reconciler name `ns-reconciler-<ns>` and the `<ns>` manager. */
export const DefaultRepoSyncName = "repo-sync" as const;

export const SourceType = {
  Git: "git",
  Oci: "oci",
  Helm: "helm",
} as const;
export type SourceType = (typeof SourceType)[keyof typeof SourceType];

export const SourceFormat = {
  /** Every manifest under `dir`, directory layout ignored. The only format a RepoSync has. */
  Unstructured: "unstructured",
  /** Config Sync's cluster/, namespaces/, system/ layout with namespace inheritance. */
  Hierarchy: "hierarchy",
} as const;
export type SourceFormat = (typeof SourceFormat)[keyof typeof SourceFormat];

export const Defaults = {
  sourceType: SourceType.Git,
  /** Config Sync's RootSync default: a RootSync that omits sourceFormat is read as hierarchy. */
  rootSyncSourceFormat: SourceFormat.Hierarchy,
  repoSyncSourceFormat: SourceFormat.Unstructured,
  /** Used when neither branch nor revision is set. */
  gitBranch: "master",
  /** `HEAD` means "the tip of `branch`"; any other revision wins over branch. */
  gitRevision: "HEAD",
  /** The repository root, written as `.` in status.gitStatus.dir when spec.git.dir is unset. */
  gitDir: ".",
  /** Source polling period (spec.git.period / spec.oci.period). */
  period: "15s",
  periodMs: 15_000,
  /** Helm charts are re-fetched hourly by default (spec.helm.period). */
  helmPeriod: "1h",
  /** How long the applier waits for applied objects to become Current (override.reconcileTimeout). */
  reconcileTimeout: "5m",
  reconcileTimeoutMs: 300_000,
  /** Client-side timeout of one API server request (override.apiServerTimeout). */
  apiServerTimeout: "15s",
  apiServerTimeoutMs: 15_000,
  /** Release namespace for a Helm chart that names none. */
  helmReleaseNamespace: "default",
  /** ConfigMap key read for spec.helm.valuesFileRefs[] when dataKey is unset. */
  helmValuesFileDataKey: "values.yaml",
} as const;

export const Limits = {
  /**
   * Longest RootSync name. The ResourceGroup carries the label value
   * `config-management-system_<name>`, and label values stop at 63 characters.
   */
  maxRootSyncNameLength: 38,
  /**
   * Longest `len(namespace) + len(name)` of a RepoSync, so that
   * `ns-reconciler-<ns>-<name>-<len>` fits in 63 characters.
   */
  maxRepoSyncNamespaceAndNameLength: 45,
  /** Kubernetes label values and DNS-1123 labels. */
  maxLabelValueLength: 63,
} as const;
