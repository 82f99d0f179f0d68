/** A StatefulSet with a volume claim template, as declared and as kube-apiserver returns it. */
import type { JsonObject } from "../json.ts";

export function declaredStatefulSet(): JsonObject {
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: "db", namespace: "shop" },
    spec: {
      serviceName: "db",
      replicas: 1,
      selector: { matchLabels: { app: "db" } },
      template: {
        metadata: { labels: { app: "db" } },
        spec: {
          containers: [
            {
              name: "postgres",
              image: "postgres:16",
              ports: [{ containerPort: 5432, name: "pg" }],
              volumeMounts: [{ name: "data", mountPath: "/var/lib/postgresql/data" }],
            },
          ],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: "data" },
          spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "10240Mi" } } },
        },
      ],
    },
  };
}

export function liveStatefulSet(): JsonObject {
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: {
      name: "db",
      namespace: "shop",
      uid: "c1a2b3c4-d5e6-4f70-8192-a3b4c5d6e7f8",
      resourceVersion: "66120",
      generation: 1,
      creationTimestamp: "2025-01-14T09:12:44Z",
    },
    spec: {
      serviceName: "db",
      replicas: 1,
      selector: { matchLabels: { app: "db" } },
      template: {
        metadata: { creationTimestamp: null, labels: { app: "db" } },
        spec: {
          containers: [
            {
              name: "postgres",
              image: "postgres:16",
              ports: [{ containerPort: 5432, name: "pg", protocol: "TCP" }],
              resources: {},
              volumeMounts: [{ name: "data", mountPath: "/var/lib/postgresql/data" }],
              terminationMessagePath: "/dev/termination-log",
              terminationMessagePolicy: "File",
              imagePullPolicy: "IfNotPresent",
            },
          ],
          restartPolicy: "Always",
          terminationGracePeriodSeconds: 30,
          dnsPolicy: "ClusterFirst",
          securityContext: {},
          schedulerName: "default-scheduler",
        },
      },
      volumeClaimTemplates: [
        {
          apiVersion: "v1",
          kind: "PersistentVolumeClaim",
          metadata: { name: "data", creationTimestamp: null },
          spec: {
            accessModes: ["ReadWriteOnce"],
            resources: { requests: { storage: "10Gi" } },
            volumeMode: "Filesystem",
          },
          status: { phase: "Pending" },
        },
      ],
      podManagementPolicy: "OrderedReady",
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 0 } },
      revisionHistoryLimit: 10,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: "Retain", whenScaled: "Retain" },
    },
    status: {
      observedGeneration: 1,
      replicas: 1,
      readyReplicas: 1,
      currentReplicas: 1,
      updatedReplicas: 1,
      currentRevision: "db-7d9f8c6b5",
      updateRevision: "db-7d9f8c6b5",
      collisionCount: 0,
      availableReplicas: 1,
    },
  };
}
