/** A ClusterIP Service as declared, and as kube-apiserver returns it (allocations and defaults). */
import type { JsonObject } from "../json.ts";

export function declaredService(): JsonObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", namespace: "shop", labels: { app: "web" } },
    spec: {
      selector: { app: "web" },
      ports: [
        { name: "http", port: 80, targetPort: 8080 },
        { name: "metrics", port: 9090 },
      ],
    },
  };
}

export function liveService(): JsonObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: "web",
      namespace: "shop",
      uid: "0b0e2f7e-5b1d-4c55-9c0e-6c1f2d7a9e01",
      resourceVersion: "5521",
      creationTimestamp: "2025-01-14T09:12:44Z",
      labels: { app: "web" },
    },
    spec: {
      clusterIP: "10.96.14.7",
      clusterIPs: ["10.96.14.7"],
      internalTrafficPolicy: "Cluster",
      ipFamilies: ["IPv4"],
      ipFamilyPolicy: "SingleStack",
      ports: [
        { name: "http", port: 80, protocol: "TCP", targetPort: 8080 },
        { name: "metrics", port: 9090, protocol: "TCP", targetPort: 9090 },
      ],
      selector: { app: "web" },
      sessionAffinity: "None",
      type: "ClusterIP",
    },
    status: { loadBalancer: {} },
  };
}
