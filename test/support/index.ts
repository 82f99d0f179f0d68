/** Helpers for integration and e2e tests against the real local control plane, Redis and git. */
export { testEnv } from "./env.ts";
export type { TestEnvironment } from "./env.ts";
export { eventually } from "./eventually.ts";
export { testFailed } from "./test-outcome.ts";
export { checkAfterCleanUp, quietly, removeAfter, removeQuietly } from "./cleanup.ts";
export type { EventuallyOptions } from "./eventually.ts";
export {
  kubeConfig,
  coreApi,
  customApi,
  suffix,
  testNamespace,
  ensureNamespace,
  statusCode,
  expectStatus,
} from "./kube.ts";
export type { Who } from "./kube.ts";
export { fixturesDir, yamlFixture } from "./fixtures.ts";
export { gadgetCrd } from "./crds.ts";
export type { JsonObject } from "./fixtures.ts";
export { TestRepo } from "./git.ts";
export { startReconciler } from "./reconciler.ts";
export { createRepoSync, repoSyncStatus, repoSyncSyncedTo } from "./sync.ts";
export type { RepoSyncOptions, SyncedToOptions } from "./sync.ts";
export { startPrometheus } from "./prometheus.ts";
export type { PrometheusServer } from "./prometheus.ts";
export {
  createRootSync,
  rootSynced,
  rootSyncGone,
  rootSyncNamespace,
  rootSyncs,
  rootSyncSecret,
  rootSyncStatus,
  syncErrorsAt,
  updateRootSyncSpec,
} from "./root-sync.ts";
export type { RootSyncOptions } from "./root-sync.ts";
