/** ConfigMap, Secret and Namespace as declared and as kube-apiserver returns them. */
import type { JsonObject } from "../json.ts";

const serverMetadata = {
  uid: "9d7c1a52-1f0e-4e0b-8f43-2c8a0d6e5b33",
  resourceVersion: "73311",
  creationTimestamp: "2025-01-14T09:12:44Z",
};

export function declaredConfigMap(): JsonObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "web-config", namespace: "shop", creationTimestamp: null },
    data: { "app.properties": "mode=production\nthreads=8\n", LOG_LEVEL: "info", EMPTY: "" },
  };
}

export function liveConfigMap(): JsonObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "web-config", namespace: "shop", ...serverMetadata },
    data: { "app.properties": "mode=production\nthreads=8\n", LOG_LEVEL: "info", EMPTY: "" },
  };
}

export function declaredSecret(): JsonObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "web-credentials", namespace: "shop" },
    type: "Opaque",
    stringData: { username: "web", password: "s3cr3t-passw0rd" },
    data: { "ca.crt": "LS0tLS1CRUdJTiBDRVJU\nSUZJQ0FURS0tLS0tCg==" },
  };
}

export function liveSecret(): JsonObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "web-credentials", namespace: "shop", ...serverMetadata },
    type: "Opaque",
    data: {
      "ca.crt": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==",
      username: "d2Vi",
      password: "czNjcjN0LXBhc3N3MHJk",
    },
  };
}

export function declaredNamespace(): JsonObject {
  return { apiVersion: "v1", kind: "Namespace", metadata: { name: "shop", labels: { team: "checkout" } } };
}

export function liveNamespace(): JsonObject {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name: "shop",
      ...serverMetadata,
      labels: { team: "checkout", "kubernetes.io/metadata.name": "shop" },
    },
    spec: { finalizers: ["kubernetes"] },
    status: { phase: "Active" },
  };
}
