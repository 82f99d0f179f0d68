/**
 * A Pod as declared, and as kube-apiserver returns it: the ServiceAccount admission plugin has added
 * the projected token volume and its mount, DefaultTolerationSeconds has appended the not-ready and
 * unreachable tolerations, and defaulting has filled the rest.
 */
import type { JsonObject } from "../json.ts";

export function declaredPod(): JsonObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "debug", namespace: "shop", labels: { app: "debug" } },
    spec: {
      containers: [
        {
          name: "shell",
          image: "busybox:1.36",
          command: ["sleep", "infinity"],
          resources: { requests: { cpu: "0.1", memory: "64Mi" } },
          volumeMounts: [{ name: "scratch", mountPath: "/scratch" }],
        },
      ],
      volumes: [{ name: "scratch", emptyDir: { sizeLimit: "1024Mi" } }],
      tolerations: [{ key: "dedicated", operator: "Equal", value: "debug", effect: "NoSchedule" }],
    },
  };
}

export function livePod(): JsonObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "debug",
      namespace: "shop",
      uid: "e0d4c3a1-7b62-4f0e-8d8e-1c2b3a4d5e6f",
      resourceVersion: "90211",
      creationTimestamp: "2025-01-14T09:12:44Z",
      labels: { app: "debug" },
    },
    spec: {
      containers: [
        {
          name: "shell",
          image: "busybox:1.36",
          command: ["sleep", "infinity"],
          imagePullPolicy: "IfNotPresent",
          resources: { requests: { cpu: "100m", memory: "64Mi" } },
          terminationMessagePath: "/dev/termination-log",
          terminationMessagePolicy: "File",
          volumeMounts: [
            { name: "scratch", mountPath: "/scratch" },
            {
              name: "kube-api-access-7xk2p",
              readOnly: true,
              mountPath: "/var/run/secrets/kubernetes.io/serviceaccount",
            },
          ],
        },
      ],
      volumes: [
        { name: "scratch", emptyDir: { sizeLimit: "1Gi" } },
        {
          name: "kube-api-access-7xk2p",
          projected: {
            defaultMode: 420,
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
              { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
              {
                downwardAPI: {
                  items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }],
                },
              },
            ],
          },
        },
      ],
      tolerations: [
        { key: "dedicated", operator: "Equal", value: "debug", effect: "NoSchedule" },
        { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
        { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
      ],
      dnsPolicy: "ClusterFirst",
      enableServiceLinks: true,
      nodeName: "worker-2",
      preemptionPolicy: "PreemptLowerPriority",
      priority: 0,
      restartPolicy: "Always",
      schedulerName: "default-scheduler",
      securityContext: {},
      serviceAccount: "default",
      serviceAccountName: "default",
      terminationGracePeriodSeconds: 30,
    },
    status: {
      phase: "Running",
      podIP: "10.244.1.17",
      hostIP: "172.18.0.3",
      qosClass: "Burstable",
      startTime: "2025-01-14T09:12:44Z",
      conditions: [{ type: "Ready", status: "True", lastProbeTime: null, lastTransitionTime: "2025-01-14T09:12:47Z" }],
    },
  };
}
