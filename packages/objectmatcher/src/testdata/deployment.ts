/** A Deployment as declared in Git, and as kube-apiserver (1.30) returns it after creation. */
import type { JsonObject } from "../json.ts";

export function declaredDeployment(): JsonObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "shop", labels: { app: "web" }, creationTimestamp: null },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" }, creationTimestamp: null },
        spec: {
          containers: [
            {
              name: "web",
              image: "nginx:1.27",
              ports: [{ containerPort: 80, name: "http" }],
              env: [{ name: "MODE", value: "production" }],
              resources: { limits: { cpu: 0.5, memory: "1024Mi" }, requests: { cpu: "250m" } },
              args: [],
              volumeMounts: [{ name: "config", mountPath: "/etc/web" }],
            },
          ],
          volumes: [{ name: "config", configMap: { name: "web-config" } }],
        },
      },
    },
    status: {},
  };
}

export function liveDeployment(): JsonObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: "web",
      namespace: "shop",
      uid: "3f1c9f5e-8a43-4c3e-9a55-0b6b2f3d1c11",
      resourceVersion: "184467",
      generation: 4,
      creationTimestamp: "2025-01-14T09:12:44Z",
      labels: { app: "web" },
      annotations: { "deployment.kubernetes.io/revision": "4" },
      managedFields: [
        {
          manager: "driftless",
          operation: "Update",
          apiVersion: "apps/v1",
          time: "2025-01-14T09:12:44Z",
          fieldsType: "FieldsV1",
          fieldsV1: { "f:spec": { "f:replicas": {} } },
        },
      ],
    },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { creationTimestamp: null, labels: { app: "web" } },
        spec: {
          containers: [
            {
              name: "web",
              image: "nginx:1.27",
              ports: [{ containerPort: 80, name: "http", protocol: "TCP" }],
              env: [{ name: "MODE", value: "production" }],
              resources: { limits: { cpu: "500m", memory: "1Gi" }, requests: { cpu: "250m" } },
              volumeMounts: [{ name: "config", mountPath: "/etc/web" }],
              terminationMessagePath: "/dev/termination-log",
              terminationMessagePolicy: "File",
              imagePullPolicy: "IfNotPresent",
            },
          ],
          volumes: [{ name: "config", configMap: { name: "web-config", defaultMode: 420 } }],
          restartPolicy: "Always",
          terminationGracePeriodSeconds: 30,
          dnsPolicy: "ClusterFirst",
          securityContext: {},
          schedulerName: "default-scheduler",
        },
      },
      strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" } },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
    },
    status: {
      observedGeneration: 4,
      replicas: 3,
      updatedReplicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      conditions: [
        {
          type: "Available",
          status: "True",
          lastUpdateTime: "2025-01-14T09:12:50Z",
          lastTransitionTime: "2025-01-14T09:12:50Z",
          reason: "MinimumReplicasAvailable",
          message: "Deployment has minimum availability.",
        },
      ],
    },
  };
}
