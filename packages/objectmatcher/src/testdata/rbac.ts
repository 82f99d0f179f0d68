/** RBAC objects as declared and as kube-apiserver returns them (rules are stored as sent). */
import type { JsonObject } from "../json.ts";

export function declaredClusterRole(): JsonObject {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: "shop-reader" },
    rules: [
      { apiGroups: [""], resources: ["pods", "services"], verbs: ["get", "list", "watch"] },
      { apiGroups: ["apps"], resources: ["deployments"], verbs: ["get", "list"] },
    ],
  };
}

export function liveClusterRole(): JsonObject {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: {
      name: "shop-reader",
      uid: "7f6e5d4c-3b2a-4190-8a7b-6c5d4e3f2a1b",
      resourceVersion: "1204",
      creationTimestamp: "2025-01-14T09:12:44Z",
    },
    rules: [
      { apiGroups: [""], resources: ["pods", "services"], verbs: ["get", "list", "watch"] },
      { apiGroups: ["apps"], resources: ["deployments"], verbs: ["get", "list"] },
    ],
  };
}
