/**
 * The Deployment that runs one sync's reconciler in `deployment` mode, as data. Named like Config
 * Sync's (root-reconciler, ns-reconciler-<ns>...) in config-management-system, running as the
 * reconciler's own ServiceAccount, hardened (non-root, read-only root filesystem, no privilege
 * escalation, no capabilities), with probes on the reconciler's /healthz and /readyz. Rendering runs
 * in a second container without the token or the Redis password (render-container.ts), present only
 * while the reconciler has annotated its sync `configsync.gke.io/requires-rendering: "true"`.
 */
import {
  Kind,
  reconcilerName,
  requiresRendering,
  RootSyncNamespace,
  SyncLabel,
  type Quantity,
  type RSync,
} from "@driftless/api";
import type { KubeObject } from "@driftless/kube";
import { PrivateTmpdirEnv } from "@driftless/sync";
import { syncOwnedLabels } from "./labels.ts";
import { DefaultReconcilerMemoryLimit, reconcilerEnvironment, reconcilerNodeFlags } from "./node-flags.ts";
import { reconcilerRedisEnv } from "./redis-env.ts";
import { RedisNonceAnnotation } from "./redis-rollout.ts";
import { overrideEnv, ReconcilerContainer, reconcilerOverrides } from "./reconciler-overrides.ts";
import {
  hardenedContainer,
  reconcilerRenderEnv,
  reconcilerSocketMount,
  reconcilerTokenMount,
  renderContainer,
  renderVolumes,
  resourcesWithDefaults,
  tokenVolume,
} from "./render-container.ts";
import { specHash } from "./spec-hash.ts";
import { syncRefOf } from "./workload.ts";

export interface DeploymentSettings {
  /** Image holding apps/reconciler (the Dockerfile at the repository root builds it). */
  readonly image: string;
  readonly imagePullPolicy?: "Always" | "IfNotPresent" | "Never";
  /** Redis as the reconciler pods reach it (credentials in it are dropped: each pod has its own Secret). */
  readonly redisUrl: string;
  readonly queuePrefix: string | undefined;
  readonly logLevel: string;
  /** This cluster's name, for cluster selectors (the reconciler's CLUSTER_NAME). */
  readonly clusterName?: string;
  /** A RepoSync's reconciler honours override.enableShellInRendering (the manager's flag, passed on). */
  readonly allowRepoSyncShellInRendering?: boolean;
}

/** The reconciler's /metrics, /healthz and /readyz port (Config Sync's reconciler metrics port). */
export const ReconcilerMetricsPort = 8675;
export { ReconcilerContainer };
export const SpecHashAnnotation = "driftless.dev/sync-spec-hash";
/**
 * Config Sync's labels on the reconciler Deployment and its pods: `app: reconciler`, and the sync's
 * generation, so its pods roll on every generation as Config Sync's do. Neither is in the selector, which
 * an existing Deployment cannot change.
 */
export const SyncGenerationLabel = "configsync.gke.io/sync-generation";
const appLabel = { app: "reconciler" } as const;
/** A fingerprint of the pod's Redis password: a new password (rotation) replaces the pod, which reads it at start. */
export const RedisCredentialAnnotation = "driftless.dev/redis-credential";

/** The Secret holding a reconciler's Redis user and password (redis-secret.ts writes it). */
export function redisSecretName(reconciler: string): string {
  return `${reconciler}-redis`;
}

const defaultResources = {
  requests: { cpu: "50m", memory: "128Mi" },
  limits: { memory: DefaultReconcilerMemoryLimit },
} as const;

/** The reconciler container's requests and limits: its defaults, its entry and the entries it does the work of. */
export function reconcilerResources(sync: RSync): {
  requests: Record<string, Quantity>;
  limits: Record<string, Quantity>;
} {
  return resourcesWithDefaults(sync, ReconcilerContainer, defaultResources);
}

/**
 * The pod template's fingerprint: the spec, its generation, the image and whether it has a render container. A new one
 * replaces the pod and draws a new Redis rollout (redis-rollout.ts).
 */
export function podTemplateHash(sync: RSync, settings: Pick<DeploymentSettings, "image">): string {
  return specHash(sync, {
    image: settings.image,
    rendering: requiresRendering(sync.metadata.annotations),
    // The template carries the generation (SyncGenerationLabel): a new one replaces the pod, so a new rollout.
    generation: generationOf(sync),
  });
}

function generationOf(sync: RSync): string {
  return String(sync.metadata.generation ?? 0);
}

/** The reconciler's memory limit: the sync's override or the default. Sizes its heap in either mode. */
export function reconcilerMemoryLimit(sync: RSync): Quantity {
  return reconcilerResources(sync)["limits"]?.["memory"] ?? DefaultReconcilerMemoryLimit;
}

export function reconcilerDeployment(
  sync: RSync,
  settings: DeploymentSettings,
  redisCredential = "",
  redisNonce?: string,
): KubeObject {
  const ref = syncRefOf(sync);
  const name = reconcilerName(ref.kind, ref.namespace, ref.name);
  const selector = { [SyncLabel.Reconciler]: name };
  const labels = { ...syncOwnedLabels(ref), ...selector, ...appLabel, [SyncGenerationLabel]: generationOf(sync) };
  const overrides = reconcilerOverrides(sync);
  // Config Sync's footprint rule: a source without a kustomization runs one container, not two.
  const rendering = requiresRendering(sync.metadata.annotations);
  const env = [
    { name: "SYNC_KIND", value: ref.kind },
    { name: "SYNC_NAME", value: ref.name },
    { name: "SYNC_NAMESPACE", value: ref.namespace },
    ...reconcilerRedisEnv(settings.redisUrl, redisSecretName(name)),
    { name: "METRICS_PORT", value: String(ReconcilerMetricsPort) },
    { name: "DRIFTLESS_CACHE_DIR", value: "/cache" },
    // /tmp is this container's emptyDir: at start it removes what a killed predecessor left there (stale-temp.ts).
    { name: PrivateTmpdirEnv, value: "true" },
    { name: "LOG_LEVEL", value: overrides.logLevel ?? settings.logLevel },
    ...overrideEnv(overrides),
    ...Object.entries(reconcilerEnvironment).map(([envName, value]) => ({ name: envName, value })),
    ...(settings.queuePrefix === undefined ? [] : [{ name: "DRIFTLESS_QUEUE_PREFIX", value: settings.queuePrefix }]),
    ...(settings.clusterName === undefined ? [] : [{ name: "CLUSTER_NAME", value: settings.clusterName }]),
    ...reconcilerRenderEnv,
    ...(settings.allowRepoSyncShellInRendering === true && ref.kind === Kind.RepoSync
      ? [{ name: "DRIFTLESS_ALLOW_REPOSYNC_SHELL_IN_RENDERING", value: "true" }]
      : []),
  ];
  const probe = (path: string, periodSeconds: number) => ({
    httpGet: { path, port: "metrics" },
    periodSeconds,
    timeoutSeconds: 5,
    failureThreshold: 3,
  });
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name,
      namespace: RootSyncNamespace,
      labels,
      ...(redisNonce === undefined ? {} : { annotations: { [RedisNonceAnnotation]: redisNonce } }),
    },
    spec: {
      replicas: 1,
      // Never two pods of one reconciler: the queue would keep them from overlapping, but they would double the memory.
      strategy: { type: "Recreate" },
      selector: { matchLabels: selector },
      template: {
        metadata: {
          labels: { ...labels, [SyncLabel.DeploymentName]: name },
          // The spec changes → the template changes → the pod is replaced and reads the new spec.
          annotations: {
            [SpecHashAnnotation]: podTemplateHash(sync, settings),
            [RedisCredentialAnnotation]: redisCredential,
          },
        },
        spec: {
          serviceAccountName: name,
          // The token is projected into the reconciler container alone (render-container.ts).
          automountServiceAccountToken: false,
          // Service environment variables name what the render container has no business knowing.
          enableServiceLinks: false,
          terminationGracePeriodSeconds: 40,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 65532,
            runAsGroup: 65532,
            fsGroup: 65532,
            seccompProfile: { type: "RuntimeDefault" },
          },
          containers: [
            {
              name: ReconcilerContainer,
              image: settings.image,
              imagePullPolicy: settings.imagePullPolicy ?? "IfNotPresent",
              // A crash's termination message is the tail of its log, whose last line says why (pod-failure.ts).
              terminationMessagePolicy: "FallbackToLogsOnError",
              // The image's bundle (scripts/bundle.ts), with a heap sized to the container's memory limit.
              command: ["node", ...reconcilerNodeFlags(reconcilerMemoryLimit(sync)), "dist/driftless-reconciler.mjs"],
              env,
              ports: [{ name: "metrics", containerPort: ReconcilerMetricsPort, protocol: "TCP" }],
              // Liveness starts once the process has answered: a slow start on a busy node is not a failure.
              startupProbe: { ...probe("/healthz", 2), failureThreshold: 60 },
              readinessProbe: probe("/readyz", 10),
              livenessProbe: probe("/healthz", 20),
              resources: reconcilerResources(sync),
              securityContext: hardenedContainer,
              volumeMounts: [
                { name: "cache", mountPath: "/cache" },
                { name: "tmp", mountPath: "/tmp" },
                reconcilerTokenMount,
                ...(rendering ? [reconcilerSocketMount] : []),
              ],
            },
            ...(rendering
              ? [
                  renderContainer(sync, {
                    image: settings.image,
                    imagePullPolicy: settings.imagePullPolicy ?? "IfNotPresent",
                    logLevel: overrides.logLevel ?? settings.logLevel,
                    cacheVolume: "cache",
                    cacheDir: "/cache",
                  }),
                ]
              : []),
          ],
          volumes: [
            { name: "cache", emptyDir: { sizeLimit: "1Gi" } }, // a git clone and checkout, or an image or chart (docs/design/manager.md)
            { name: "tmp", emptyDir: { sizeLimit: "512Mi" } }, // a render: kustomize output (256 MiB at most) and helm caches
            tokenVolume, // the reconciler container's alone (render-container.ts)
            // The socket's folder and the render container's /tmp, with that container only.
            ...(rendering ? renderVolumes : []),
          ],
        },
      },
    },
  };
}

/** Whether the Deployment's current generation has an available pod. */
export function deploymentAvailable(deployment: KubeObject): boolean {
  const status = (deployment["status"] ?? {}) as {
    observedGeneration?: number;
    availableReplicas?: number;
    updatedReplicas?: number;
  };
  return (
    (status.observedGeneration ?? 0) >= (deployment.metadata.generation ?? 1) &&
    (status.availableReplicas ?? 0) >= 1 &&
    (status.updatedReplicas ?? 0) >= 1
  );
}

/**
 * Why the Deployment cannot bring its pod up, from its own conditions: pods refused at creation
 * (ReplicaFailure: forbidden, quota, an admission policy) or a rollout past its deadline.
 */
export function deploymentFailure(deployment: KubeObject): string | undefined {
  const conditions = ((deployment["status"] as { conditions?: unknown } | undefined)?.conditions ?? []) as {
    type?: string;
    status?: string;
    reason?: string;
    message?: string;
  }[];
  const failed = conditions.find(
    (c) => (c.type === "ReplicaFailure" && c.status === "True") || (c.type === "Progressing" && c.status === "False"),
  );
  if (failed === undefined) return undefined;
  return `reconciler deployment ${deployment.metadata.name}: ${failed.reason ?? failed.type ?? "failed"}: ${failed.message ?? ""}`.trim();
}
