/**
 * @driftless/applier: order, apply (three-way match), inventory, prune and kstatus for one sync.
 *
 * @example
 * ```ts
 * import { applyPlan, plan, prune, Inventory, DirectLiveState } from "@driftless/applier";
 *
 * const waves = plan(desired);                       // CRDs, Namespaces, the rest; depends-on as a DAG
 * const outcomes = await applyPlan(waves, { client, mapper, live: new DirectLiveState(client), sync, commit, annotator, matcher });
 * const inventory = new Inventory(client, sync);    // the ResourceGroup
 * await prune(leftGit, { client, mapper, sync, lastAppliedAnnotation, namespaceInUse });
 * ```
 */
export { applyPlan } from "./apply-plan.ts";
export { applyObject, ApplyError, UnknownKindAtApplyError } from "./apply-object.ts";
export type { ApplyOptions } from "./apply-options.ts";
export { Operation } from "./apply-outcome.ts";
export type { ApplyOutcome } from "./apply-outcome.ts";
export { awaitsAdoption, configSyncAppliedRecord, withAdoptedRecord } from "./adoption.ts";
export { alignApplySetParent, applySetId, applySetParentPatch, ApplySetToolingConflictError } from "./applyset.ts";
export { mapLimit } from "./concurrency.ts";
export {
  DependencyActuation,
  DependencyNotAppliedError,
  DependencyNotReconciledError,
} from "./dependency-readiness.ts";
export { crdRemovalErrors, UnsupportedCrdRemovalError } from "./crd-removal.ts";
export { CrdInUseError, customResourcesLeft } from "./crd-usage.ts";
export type { CustomResourcesLeft } from "./crd-usage.ts";
export { crdNameOf, CrdUnreadableError, CustomResourceSchemaLoader } from "./cr-schemas.ts";
export type { CrdMeta, CustomResourceSchemaLoaderOptions } from "./cr-schemas.ts";
export { OpenApiSchemaLoader } from "./openapi-schemas.ts";
export type { OpenApiSchemaLoaderOptions } from "./openapi-schemas.ts";
export { cachedRecordValue, digestRecord, hasRecordDigest, restoreRecord } from "./record-digest.ts";
export {
  annotationsOf,
  comparisonCandidate,
  decorate,
  isManagementDisabled,
  mutationIgnored,
  setToken,
  strayMutationAnnotation,
  stripManagement,
  withDeclaredMetadata,
} from "./decorate.ts";
export { declaringSourceOf, gitContextValue, renderedSourceOf, sourcePathFromRoot } from "./declaring-source.ts";
export type { DeclaringSource } from "./declaring-source.ts";
export { declaredResource, toDesired } from "./desired.ts";
export type { DeclaredInput, DesiredObject, JsonObject, SyncIdentity } from "./desired.ts";
export { Inventory, resourceGroupMapping, StatusesOmittedCondition } from "./inventory.ts";
export { fitStatuses, InventoryTooLargeError, ResourceGroupByteBudget } from "./inventory-budget.ts";
export {
  failureConditions,
  groupConditions,
  GroupConditionType,
  mergeConditions,
  ownershipCondition,
  reconcileOf,
  reportedStatus,
} from "./resource-status.ts";
export type { Actuation, GroupCondition, Reconcile, ResourceStatusEntry } from "./resource-status.ts";
export { groupMetadata } from "./resource-group-metadata.ts";
export type { GroupMetadata } from "./resource-group-metadata.ts";
export { computeHealth, HealthStatus } from "./kstatus.ts";
export { DirectLiveState } from "./live-state.ts";
export type { LiveState, PlanOutline } from "./live-state.ts";
export { compareIds, describeId, groupOfApiVersion, idKey, objMetadataKey } from "./object-id.ts";
export type { ObjectId } from "./object-id.ts";
export {
  CyclicDependencyError,
  DependencyScheduledForDeleteError,
  DependentScheduledForApplyError,
  DuplicateDependencyError,
  MissingDependencyError,
  plan,
} from "./plan.ts";
export type { Plan } from "./plan.ts";
export { conflictingManager, isRootManager, ManagementConflictError } from "./precedence.ts";
export {
  NamespaceInUseError,
  NamespaceInUsePolicy,
  ownedBy,
  prune,
  PruneError,
  PruneOperation,
  unmanage,
  UnknownTypeError,
} from "./prune.ts";
export type { PruneOptions, PruneOutcome } from "./prune.ts";
export { DependentNotDeletedError } from "./prune-order.ts";
export { crdMapping, waitForEstablished } from "./wait.ts";
export { settleApplied } from "./settle.ts";
export type { Settled, SettleOptions } from "./settle.ts";
export { settlePruned } from "./settle-pruned.ts";
export type { SettlePrunedOptions } from "./settle-pruned.ts";
export { VerifiedMatches } from "./verified-matches.ts";
