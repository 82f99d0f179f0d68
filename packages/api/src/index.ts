/**
 * @driftless/api: the Config Sync API as TypeScript types, constants and pure helpers — the
 * vocabulary every other driftless package speaks. Depends on nothing of ours.
 *
 * @example
 * ```ts
 * import { parseSync, reconcilerName, setCondition, statusErrors, SyncConditionType } from "@driftless/api";
 *
 * const parsed = parseSync(objectReadFromTheCluster);
 * if (parsed.ok) {
 *   const sync = parsed.value; // defaults applied: branch master, revision HEAD, period 15s, auth none
 *   const deployment = reconcilerName(sync.kind, sync.metadata.namespace ?? "", sync.metadata.name);
 * } else {
 *   // Every problem at once, as KNV1061 errors, reported on the Stalled condition.
 *   const { errors, errorSummary } = statusErrors(parsed.errors);
 *   const stalled = { type: SyncConditionType.Stalled, status: "True", reason: "Validation", errors, errorSummary } as const;
 *   const { conditions, changed } = setCondition(currentStatus.conditions, stalled, new Date());
 *   if (changed) await writeStatus({ ...currentStatus, conditions }); // unchanged: no write, no churn
 * }
 * ```
 */
export {
  ConfigSyncGroup,
  KptGroup,
  ConfigSyncVersion,
  KptVersion,
  ApiVersion,
  Kind,
  Plural,
  Singular,
  CrdName,
  isSyncKind,
} from "./groups.ts";
export type { SyncKind } from "./groups.ts";

export {
  RootSyncNamespace,
  DefaultRootSyncName,
  DefaultRepoSyncName,
  SourceType,
  SourceFormat,
  Defaults,
  Limits,
} from "./defaults.ts";

export { Finalizer } from "./finalizers.ts";

export {
  ManagedAnnotation,
  ConfigSyncOnlyAnnotation,
  ManagedValue,
  ManagedLabel,
  ManagedByValue,
  ManagementAnnotationKeys,
  ManagementLabelKeys,
  ApplySetLabel,
  ApplySetAnnotation,
  ApplySetToolingName,
  ApplySetToolingValue,
  ConfigSyncFieldManager,
  UserAnnotation,
  LifecycleDeletionValue,
  LifecycleMutationValue,
  LocalConfigFalse,
  SyncAnnotation,
  DeletionPropagationPolicy,
  DefaultDeletionPropagationPolicy,
  SyncLabel,
  InventoryIdLabel,
  ResourceGroupStatusModeAnnotation,
  StatusMode,
  deletionPropagationPolicyOf,
  allowsEmptySource,
  isSuspended,
  pendingSyncRequest,
  requiresRendering,
  isLocalConfig,
} from "./annotations.ts";

export type { ObjectMeta, ObjectRef } from "./object-meta.ts";

export {
  GitAuthType,
  SupportedGitAuthTypes,
  GitAuthTypesWithSecret,
  GitAuthTypesWithProxy,
  OciAuthType,
  HelmAuthType,
  NamespaceStrategy,
  RoleRefKind,
} from "./sync-types.ts";
export type {
  SecretReference,
  GitSpec,
  OciSpec,
  ValuesFileRef,
  HelmBase,
  HelmRootSyncSpec,
  HelmRepoSyncSpec,
  Quantity,
  ContainerResourcesSpec,
  ContainerLogLevelOverride,
  RoleRef,
  RootSyncRoleRef,
  OverrideSpec,
  RootSyncOverrideSpec,
  RepoSyncOverrideSpec,
  RootSyncSpec,
  RepoSyncSpec,
  RootSync,
  RepoSync,
  RSync,
} from "./sync-types.ts";

export { ErrorSourceRef, ConditionStatus } from "./sync-status-types.ts";
export type {
  GitStatus,
  OciStatus,
  HelmStatus,
  GroupVersionKind,
  ResourceRef,
  ConfigSyncError,
  ErrorSummary,
  SourceStatus,
  RenderingStatus,
  SyncStatus,
  SyncCondition,
  SyncStatusFields,
  RootSyncStatus,
  RepoSyncStatus,
} from "./sync-status-types.ts";

export {
  ResourceStatusValue,
  ActuationStrategy,
  Actuation,
  ReconcileValue,
  ResourceGroupConditionType,
  SourceHashLength,
  sourceHash,
} from "./resource-group.ts";
export type {
  ResourceGroup,
  ResourceGroupSpec,
  ResourceGroupStatus,
  ResourceGroupCondition,
  ResourceStatus,
  GroupStatus,
  ObjMetadata,
  GroupMetadata,
  Descriptor,
  Link,
} from "./resource-group.ts";

export {
  RootReconcilerPrefix,
  NsReconcilerPrefix,
  RootManagerScope,
  rootReconcilerName,
  nsReconcilerName,
  reconcilerName,
  managerAnnotationValue,
  parseManagerAnnotation,
  inventoryId,
  inventoryGroupNames,
  InventoryOverflowSuffix,
  resourceId,
} from "./names.ts";
export type { ManagerRef } from "./names.ts";

export { dns1123LabelErrors, dns1123SubdomainErrors, isDns1123Label, isDns1123Subdomain } from "./kube-names.ts";
export { parseDuration, formatDuration } from "./duration.ts";
export { helmChartNameProblem, helmReleaseNameProblem } from "./helm-names.ts";
export { pollPeriodMs, PollPeriodBounds } from "./poll-period.ts";
export { kubeTime } from "./kube-time.ts";

export {
  SyncConditionType,
  clearCondition,
  getCondition,
  isConditionTrue,
  setCondition,
  removeCondition,
} from "./conditions.ts";
export type { ConditionInput, SetConditionResult } from "./conditions.ts";

export {
  MaxStatusErrors,
  MaxErrorMessageLength,
  MaxErrorResources,
  knvNumber,
  knvErrorText,
  toConfigSyncError,
  statusErrors,
  combineSummaries,
  StalledErrorSummary,
  stalledMessage,
} from "./status.ts";
export type { StatusErrors, StatusErrorOptions } from "./status.ts";

export { ErrorClass, KnvCode, DriftlessError, toDriftlessError } from "./errors.ts";
export type { ErrorResource, DriftlessErrorOptions } from "./errors.ts";
export { InvalidSyncError } from "./invalid-sync-error.ts";
export { redactUrl, redactCredentials, redactCredentialsIn } from "./redact.ts";
export { relativeSourceDir, sourceStatusBlock } from "./source-status.ts";
export type { SourceStatusBlock } from "./source-status.ts";
export { sourcePeriodOf } from "./source-period.ts";
export { apiServerTimeoutOverride, reconcileTimeoutMsOf } from "./override-timeouts.ts";
export type { SyncIdentity } from "./invalid-sync-error.ts";

export { gitAuthAlternative } from "./git-auth-alternative.ts";
export { parseSync, parseRootSync, parseRepoSync } from "./parse-sync.ts";
export type { ParseResult } from "./parse-sync.ts";

export { rootSyncCrd, repoSyncCrd, resourceGroupCrd, crdFiles } from "./crds.ts";
export type { CustomResourceDefinition, CrdVersion, PrinterColumn } from "./crds.ts";
export type { JsonSchemaProps } from "./crd-schema.ts";
export { withoutTrailingSlashes } from "./trailing-slashes.ts";
export { isSpecialNamespace } from "./special-namespaces.ts";
