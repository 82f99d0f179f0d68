/**
 * The parts of a reconciler pod that keep rendering away from its credentials, as Config Sync's
 * hydration-controller does: a second container running `kustomize build` for the reconciler over a
 * unix socket, with the checkouts read-only and without the ServiceAccount token or the Redis
 * password; and the token itself, mounted into the reconciler container only. The pod has the render
 * container only while its sync is annotated `configsync.gke.io/requires-rendering: "true"`.
 */
import type { Quantity, RSync } from "@driftless/api";
import { PrivateTmpdirEnv } from "@driftless/sync";
import {
  compareQuantities,
  ContainerFor,
  containerResources,
  containerVerbosity,
  RenderContainer,
  type DriftlessContainer,
} from "./container-overrides.ts";
import { logLevelOf } from "./reconciler-overrides.ts";

export { containerResources, RenderContainer };
/** The emptyDir both containers share: it holds the socket only (output comes back over it). */
export const RenderSocketDir = "/render";
export const RenderSocketPath = `${RenderSocketDir}/render.sock`;
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";
/** Kubelet's own choice for automounted tokens: an hour, plus 7 s so a pod can tell it was not asked for. */
const tokenExpirationSeconds = 3607;

/** kustomize holds a render's output in memory; helm charts take more than plain overlays. */
const defaultRenderResources = {
  requests: { cpu: "10m", memory: "64Mi" },
  limits: { memory: "256Mi" },
} as const;

export const hardenedContainer = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ["ALL"] },
} as const;

export interface RenderContainerSettings {
  readonly image: string;
  readonly imagePullPolicy: string;
  readonly logLevel: string;
  /** The reconciler's cache volume and where it is mounted (the checkouts to render). */
  readonly cacheVolume: string;
  readonly cacheDir: string;
}

type Amounts = Record<string, Quantity>;
type Resources = ReturnType<typeof containerResources>;
const limitField = { cpu: "cpuLimit", memory: "memoryLimit" } as const;

/**
 * A container's requests and limits (container-overrides.ts), with a default limit no override entry sets
 * raised to at least its request: that limit is driftless's own (Config Sync's containers have requests
 * only), so a larger request is no contradiction. A limit an entry sets stays (validate.ts refuses a request above it).
 */
export function resourcesWithDefaults(
  sync: RSync,
  container: DriftlessContainer,
  defaults: { readonly requests: Readonly<Amounts>; readonly limits: Readonly<Amounts> },
): Resources {
  const resources = containerResources(sync, container, defaults);
  const entries = (sync.spec.override?.resources ?? []).filter(
    (r) =>
      r.containerName !== undefined &&
      Object.hasOwn(ContainerFor, r.containerName) &&
      ContainerFor[r.containerName] === container,
  );
  for (const resource of Object.keys(defaults.limits)) {
    const field = limitField[resource as keyof typeof limitField];
    if (field === undefined || entries.some((r) => r[field] !== undefined)) continue;
    const request = resources.requests[resource];
    const limit = resources.limits[resource];
    if (request !== undefined && limit !== undefined && (compareQuantities(request, limit) ?? 0) > 0)
      resources.limits[resource] = request;
  }
  return resources;
}

/** The render container's requests and limits: its defaults and its hydration-controller entry. */
export function renderResources(sync: RSync): Resources {
  return resourcesWithDefaults(sync, RenderContainer, defaultRenderResources);
}

/** The render container: the reconciler's image in render-server mode, with nothing secret in reach. */
export function renderContainer(sync: RSync, s: RenderContainerSettings): Record<string, unknown> {
  return {
    name: RenderContainer,
    image: s.image,
    imagePullPolicy: s.imagePullPolicy,
    terminationMessagePolicy: "FallbackToLogsOnError",
    command: ["node", "dist/driftless-reconciler.mjs", "--render-server", RenderSocketPath],
    // No REDIS_*, no kubeconfig: a render can run a repository's code (exec functions) and must find nothing.
    env: [
      { name: "DRIFTLESS_RENDER_SOURCE_ROOT", value: s.cacheDir },
      // Its /tmp (render-tmp) is its own: a start removes the renders a killed (OOM) predecessor left there.
      { name: PrivateTmpdirEnv, value: "true" },
      // Its own entry in override.logLevels (hydration-controller), else the reconciler's level.
      { name: "LOG_LEVEL", value: logLevelOf(containerVerbosity(sync, RenderContainer)) ?? s.logLevel },
    ],
    resources: renderResources(sync),
    securityContext: hardenedContainer,
    volumeMounts: [
      { name: s.cacheVolume, mountPath: s.cacheDir, readOnly: true },
      { name: "render", mountPath: RenderSocketDir },
      // helm's caches and kustomize's output, private to the render container.
      { name: "render-tmp", mountPath: "/tmp" },
    ],
  };
}

/**
 * What the reconciler container always has, render container or not: the socket's path, so it never
 * runs kustomize itself beside its token (without the container it reports the render as waiting).
 */
export const reconcilerRenderEnv = [{ name: "DRIFTLESS_RENDER_SOCKET", value: RenderSocketPath }] as const;
export const reconcilerTokenMount = { name: "kube-api-access", mountPath: serviceAccountDir, readOnly: true } as const;
/** With the render container only: the folder that holds its socket. */
export const reconcilerSocketMount = { name: "render", mountPath: RenderSocketDir } as const;

/** With the render container only: the socket's folder; helm's caches with one render's output (at most 256 MiB), removed after each render. */
export const renderVolumes = [
  { name: "render", emptyDir: { sizeLimit: "1Mi" } },
  { name: "render-tmp", emptyDir: { sizeLimit: "1Gi" } },
] as const;

/**
 * The ServiceAccount token as kubelet's automount would project it (token, cluster CA, namespace), so
 * the in-cluster client works unchanged and re-reads a rotated token; the pod sets
 * automountServiceAccountToken: false so no other container gets it.
 */
export const tokenVolume = {
  name: "kube-api-access",
  projected: {
    defaultMode: 0o644,
    sources: [
      { serviceAccountToken: { path: "token", expirationSeconds: tokenExpirationSeconds } },
      { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
      {
        downwardAPI: {
          items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }],
        },
      },
    ],
  },
} as const;
