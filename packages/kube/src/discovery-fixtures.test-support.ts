/** Discovery documents shaped like kube-apiserver 1.34's (trimmed), and a fake client serving them. */
import type { KubeRequest } from "./client-options.ts";
import type { DiscoveryClient } from "./discovery.ts";
import { KubeApiError } from "./errors.ts";
import type { RawResponse } from "./transport.ts";

const crud = ["create", "get", "list", "watch"];

export function aggregatedCore(): unknown {
  return {
    kind: "APIGroupDiscoveryList",
    apiVersion: "apidiscovery.k8s.io/v2",
    metadata: {},
    items: [
      {
        metadata: {},
        versions: [
          {
            version: "v1",
            resources: [
              {
                resource: "configmaps",
                responseKind: { group: "", version: "", kind: "ConfigMap" },
                scope: "Namespaced",
                singularResource: "configmap",
                verbs: crud,
                shortNames: ["cm"],
              },
              {
                resource: "namespaces",
                responseKind: { group: "", version: "", kind: "Namespace" },
                scope: "Cluster",
                singularResource: "namespace",
                verbs: crud,
                subresources: [{ subresource: "status", responseKind: { kind: "Namespace" }, verbs: ["get"] }],
              },
            ],
            freshness: "Current",
          },
        ],
      },
    ],
  };
}

export function aggregatedNamed(extra: unknown[] = []): unknown {
  return {
    kind: "APIGroupDiscoveryList",
    apiVersion: "apidiscovery.k8s.io/v2",
    metadata: {},
    items: [
      {
        metadata: { name: "apps" },
        versions: [
          {
            version: "v1",
            resources: [
              {
                resource: "deployments",
                responseKind: { group: "", version: "", kind: "Deployment" },
                scope: "Namespaced",
                verbs: crud,
              },
            ],
            freshness: "Current",
          },
        ],
      },
      {
        metadata: { name: "autoscaling" },
        versions: [
          {
            version: "v2",
            resources: [
              {
                resource: "horizontalpodautoscalers",
                responseKind: { kind: "HorizontalPodAutoscaler" },
                scope: "Namespaced",
                verbs: crud,
              },
            ],
            freshness: "Current",
          },
          {
            version: "v1",
            resources: [
              {
                resource: "horizontalpodautoscalers",
                responseKind: { kind: "HorizontalPodAutoscaler" },
                scope: "Namespaced",
                verbs: crud,
              },
            ],
            freshness: "Current",
          },
        ],
      },
      {
        metadata: { name: "metrics.k8s.io" },
        versions: [
          {
            version: "v1beta1",
            resources: [
              { resource: "pods", responseKind: { kind: "PodMetrics" }, scope: "Namespaced", verbs: ["get"] },
            ],
            freshness: "Stale",
          },
        ],
      },
      ...extra,
    ],
  };
}

function json(value: unknown, contentType = "application/json"): RawResponse {
  return { status: 200, headers: { "content-type": contentType }, body: Buffer.from(JSON.stringify(value)) };
}

const aggregatedType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/** Serves discovery, aggregated or legacy; `extraGroups` appear in later aggregated answers. */
export class FakeDiscovery implements DiscoveryClient {
  readonly paths: string[] = [];
  readonly accepts: (string | undefined)[] = [];
  readonly extraGroups: unknown[] = [];
  readonly #aggregated: boolean;

  constructor(options: { aggregated: boolean }) {
    this.#aggregated = options.aggregated;
  }

  async requestRaw(req: KubeRequest): Promise<RawResponse> {
    this.paths.push(req.path);
    this.accepts.push(req.accept);
    if (this.#aggregated) {
      if (req.path === "/api") return json(aggregatedCore(), aggregatedType);
      if (req.path === "/apis") return json(aggregatedNamed(this.extraGroups), aggregatedType);
    }
    if (req.path === "/api") return json({ kind: "APIVersions", versions: ["v1"] });
    if (req.path === "/apis") {
      return json({
        kind: "APIGroupList",
        groups: [
          {
            name: "apps",
            versions: [{ groupVersion: "apps/v1", version: "v1" }],
            preferredVersion: { groupVersion: "apps/v1", version: "v1" },
          },
          { name: "broken.example.com", versions: [{ groupVersion: "broken.example.com/v1", version: "v1" }] },
        ],
      });
    }
    if (req.path === "/api/v1")
      return json({ resources: [{ name: "configmaps", namespaced: true, kind: "ConfigMap", verbs: crud }] });
    if (req.path === "/apis/apps/v1")
      return json({ resources: [{ name: "deployments", namespaced: true, kind: "Deployment", verbs: crud }] });
    throw KubeApiError.fromHttp(503, "service unavailable", `GET ${req.path}`);
  }

  async request<T = unknown>(req: KubeRequest): Promise<T> {
    const raw = await this.requestRaw(req);
    return JSON.parse(raw.body.toString("utf8")) as T;
  }
}
