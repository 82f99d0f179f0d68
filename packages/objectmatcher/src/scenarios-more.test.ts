import { describe, it } from "node:test";
import type { JsonObject } from "./json.ts";
import { at, edit, runScenario } from "./testdata/harness.ts";
import type { Scenario } from "./testdata/harness.ts";

/** Server-owned metadata every live object carries. */
const live = (o: JsonObject): JsonObject =>
  edit(structuredClone(o), (x) =>
    Object.assign(at(x, "metadata"), { uid: "u-9", resourceVersion: "11", creationTimestamp: "2025-01-14T09:12:44Z" }),
  );

const roleBinding = (): JsonObject => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "RoleBinding",
  metadata: { name: "readers", namespace: "shop" },
  roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
  subjects: [
    { kind: "User", name: "alice" },
    { kind: "ServiceAccount", name: "ci", namespace: "shop" },
  ],
});
const roleBindingLive = (): JsonObject =>
  edit(live(roleBinding()), (o) => (at(o, "subjects.0")["apiGroup"] = "rbac.authorization.k8s.io"));

const networkPolicy = (): JsonObject => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "NetworkPolicy",
  metadata: { name: "web", namespace: "shop" },
  spec: {
    podSelector: {},
    ingress: [{ from: [{ namespaceSelector: {} }], ports: [{ port: 8080 }] }],
  },
});
const networkPolicyLive = (): JsonObject =>
  edit(live(networkPolicy()), (o) => {
    at(o, "spec.ingress.0.ports.0")["protocol"] = "TCP";
    at(o, "spec")["policyTypes"] = ["Ingress"];
  });

const webhook = (): JsonObject => ({
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "ValidatingWebhookConfiguration",
  metadata: { name: "policy" },
  webhooks: [
    {
      name: "pods.policy.example.com",
      admissionReviewVersions: ["v1"],
      sideEffects: "None",
      clientConfig: { service: { name: "policy", namespace: "policy-system", path: "/validate" } },
      rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] }],
    },
  ],
});
const webhookLive = (): JsonObject =>
  edit(live(webhook()), (o) => {
    const w = at(o, "webhooks.0");
    Object.assign(w, {
      failurePolicy: "Fail",
      matchPolicy: "Equivalent",
      timeoutSeconds: 10,
      namespaceSelector: {},
      objectSelector: {},
    });
    Object.assign(at(w, "clientConfig"), { caBundle: "LS0tLS1CRUdJTg==" });
    Object.assign(at(w, "clientConfig.service"), { port: 443 });
    at(w, "rules.0")["scope"] = "*";
  });

const limitRange = (): JsonObject => ({
  apiVersion: "v1",
  kind: "LimitRange",
  metadata: { name: "limits", namespace: "shop" },
  spec: { limits: [{ type: "Container", max: { cpu: "2", memory: "1024Mi" } }] },
});
const limitRangeLive = (): JsonObject =>
  edit(live(limitRange()), (o) =>
    Object.assign(at(o, "spec.limits.0"), {
      max: { cpu: "2", memory: "1Gi" },
      default: { cpu: "2", memory: "1Gi" },
      defaultRequest: { cpu: "2", memory: "1Gi" },
    }),
  );

const cronJob = (): JsonObject => ({
  apiVersion: "batch/v1",
  kind: "CronJob",
  metadata: { name: "report", namespace: "shop" },
  spec: {
    schedule: "0 * * * *",
    suspend: false,
    jobTemplate: {
      spec: {
        podFailurePolicy: { rules: [{ action: "Ignore", onPodConditions: [{ type: "DisruptionTarget" }] }] },
        template: { spec: { restartPolicy: "Never", containers: [{ name: "report", image: "report:1" }] } },
      },
    },
  },
});
const cronJobLive = (): JsonObject =>
  edit(live(cronJob()), (o) => {
    Object.assign(at(o, "spec"), {
      concurrencyPolicy: "Allow",
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 1,
    });
    at(o, "spec.jobTemplate")["metadata"] = { creationTimestamp: null };
    Object.assign(at(o, "spec.jobTemplate.spec"), { backoffLimit: 6, completionMode: "NonIndexed", suspend: false });
    at(o, "spec.jobTemplate.spec.podFailurePolicy.rules.0.onPodConditions.0")["status"] = "True";
    Object.assign(at(o, "spec.jobTemplate.spec.template.spec"), {
      dnsPolicy: "ClusterFirst",
      schedulerName: "default-scheduler",
    });
  });

const pvc = (): JsonObject => ({
  apiVersion: "v1",
  kind: "PersistentVolumeClaim",
  metadata: { name: "data", namespace: "shop" },
  spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "5120Mi" } } },
});
const pvcLive = (): JsonObject =>
  edit(live(pvc()), (o) => {
    at(o, "metadata")["finalizers"] = ["kubernetes.io/pvc-protection"];
    at(o, "metadata")["annotations"] = { "pv.kubernetes.io/bind-completed": "yes" };
    Object.assign(at(o, "spec"), { storageClassName: "standard", volumeMode: "Filesystem", volumeName: "pvc-1" });
    at(o, "spec.resources.requests")["storage"] = "5Gi";
    o["status"] = { phase: "Bound", capacity: { storage: "5Gi" } };
  });

const scenarios: Scenario[] = [
  {
    name: "RoleBinding: a User subject's defaulted apiGroup",
    live: roleBindingLive,
    declared: roleBinding,
    expect: "match",
  },
  {
    name: "RoleBinding: a subject added live",
    live: () => edit(roleBindingLive(), (o) => (o["subjects"] as JsonObject[]).push({ kind: "User", name: "mallory" })),
    declared: roleBinding,
    expect: "update",
    paths: ["subjects"],
  },
  {
    name: "NetworkPolicy: defaulted port protocol and policyTypes, empty selectors kept",
    live: networkPolicyLive,
    declared: networkPolicy,
    expect: "match",
  },
  {
    name: "NetworkPolicy: the allow-from-all-namespaces peer removed live",
    live: () => edit(networkPolicyLive(), (o) => (at(o, "spec.ingress.0")["from"] = [{ podSelector: {} }])),
    declared: networkPolicy,
    expect: "update",
    paths: ["spec.ingress"],
  },
  {
    name: "ValidatingWebhookConfiguration: defaults, rule scope and an injected caBundle",
    live: webhookLive,
    declared: webhook,
    expect: "match",
  },
  {
    name: "ValidatingWebhookConfiguration: a rule's operations changed live",
    live: () => edit(webhookLive(), (o) => (at(o, "webhooks.0.rules.0")["operations"] = ["CREATE", "UPDATE"])),
    declared: webhook,
    expect: "update",
    paths: ['webhooks[name="pods.policy.example.com"].rules'],
  },
  {
    name: "LimitRange: default and defaultRequest copied from max",
    live: limitRangeLive,
    declared: limitRange,
    expect: "match",
  },
  {
    name: "LimitRange: max changed",
    live: limitRangeLive,
    declared: () => edit(limitRange(), (o) => (at(o, "spec.limits.0.max")["cpu"] = "4")),
    expect: "update",
    paths: ["spec.limits"],
  },
  {
    name: "CronJob: defaults, and a pod-failure condition's defaulted status",
    live: cronJobLive,
    declared: cronJob,
    expect: "match",
  },
  {
    name: "CronJob: schedule changed",
    live: cronJobLive,
    declared: () => edit(cronJob(), (o) => (at(o, "spec")["schedule"] = "*/5 * * * *")),
    expect: "update",
    paths: ["spec.schedule"],
  },
  {
    name: "PersistentVolumeClaim: binding, default class, protection finalizer",
    live: pvcLive,
    declared: pvc,
    expect: "match",
  },
  {
    name: "PersistentVolumeClaim: a larger request",
    live: pvcLive,
    declared: () => edit(pvc(), (o) => (at(o, "spec.resources.requests")["storage"] = "10Gi")),
    expect: "update",
    paths: ["spec.resources.requests.storage"],
  },
];

describe("more built-in kinds, as the API server returns them", () => {
  for (const s of scenarios) it(`${s.expect}: ${s.name}`, () => void runScenario(s));
});
