/**
 * @driftless/controller: the reconciler-manager's logic. It watches RootSyncs, RepoSyncs and
 * Namespaces; runs one reconciler per sync (a Deployment, or a supervised child process in local
 * mode) with its own ServiceAccount and RBAC; owns the `configsync.gke.io/reconciler-manager`
 * finalizer and unblocks RepoSyncs whose namespace is terminating; receives push webhooks; and
 * elects one active replica with a Lease. `apps/manager` is the process around `Manager`.
 *
 * @example
 * ```ts
 * import { Manager, ReconcilerMode } from "@driftless/controller";
 * import { createLogger } from "@driftless/sync";
 *
 * const manager = await Manager.start({
 *   kubeconfig: process.env.KUBECONFIG,
 *   redisUrl: "redis://127.0.0.1:6379",
 *   mode: ReconcilerMode.Process,
 *   reconcilerEntry: "/path/to/apps/reconciler/src/main.ts",
 *   stateDir: "/tmp/driftless-manager",
 *   metricsPort: 8080,
 *   webhook: { port: 8090, secret: "shared-secret" },
 *   queuePrefix: undefined,
 *   allowFileRepos: true,
 *   syncSelector: undefined,
 *   leaseName: "driftless-manager",
 *   identity: `${hostname()}_${process.pid}`,
 *   deployment: undefined,
 *   resyncMs: 300_000,
 *   logLevel: "info",
 *   log: createLogger({ component: "manager" }),
 * });
 * process.once("SIGTERM", () => void manager.stop());
 * ```
 */
export { Manager } from "./manager.ts";
export type { ManagerEnd, ManagerOptions } from "./manager-options.ts";
export { ReconcilerMode } from "./workload.ts";
export type { ReconcilerWorkload, WorkloadStatus } from "./workload.ts";
export { reconcileSync } from "./reconcile-sync.ts";
export type { SyncContext } from "./reconcile-sync.ts";
export { ProcessWorkload } from "./process-workload.ts";
export type { ProcessWorkloadOptions } from "./process-workload.ts";
export { DeploymentWorkload, FieldManager } from "./deployment-workload.ts";
export { reconcilerDeployment, ReconcilerMetricsPort, SpecHashAnnotation } from "./deployment-spec.ts";
export {
  DefaultReconcilerMemoryLimit,
  ManagerMemoryLimit,
  managerEnvironment,
  managerNodeFlags,
  reconcilerEnvironment,
  reconcilerNodeFlags,
} from "./node-flags.ts";
export type { DeploymentSettings } from "./deployment-spec.ts";
export { planIdentity, RbacName, ownedBindingName, secretRoleName, syncRoleName } from "./rbac-plan.ts";
export type { IdentityPlan, BindingRef } from "./rbac-plan.ts";
export {
  missingReconcilerWritePolicy,
  ReconcilerResourceGroupPolicyName,
  ReconcilerWritePolicyName,
} from "./reconciler-write-policy.ts";
export { ManagedByManager, syncOwnedLabels } from "./labels.ts";
export { LeaderElector } from "./leader-election.ts";
export { StandaloneResourceGroupController } from "./resource-group-status/standalone.ts";
export type { StandaloneEnd, StandaloneResourceGroupControllerOptions } from "./resource-group-status/standalone.ts";
export type { LeaderElectionOptions } from "./leader-election.ts";
export { serveWebhooks, WebhookResult } from "./webhook-server.ts";
export type { WebhookServer, WebhookServerOptions } from "./webhook-server.ts";
export { GenericSignatureHeader, WebhookProvider } from "./webhook-push.ts";
export type { Push } from "./webhook-push.ts";
export { repoKey } from "./repo-url.ts";
export { parseLabelSelector } from "./label-selector.ts";
export {
  AdmissionCertSecret,
  AdmissionWebhook,
  AdmissionWebhookName,
  removeAdmissionWebhook,
  webhookConfiguration,
} from "./admission-webhook.ts";
export type { AdmissionEndpoint, AdmissionWebhookOptions } from "./admission-webhook.ts";
export { reviewAdmission } from "./admission-review.ts";
export type { AdmissionDecision, AdmissionRequest } from "./admission-review.ts";
