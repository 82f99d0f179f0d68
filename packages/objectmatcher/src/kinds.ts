/**
 * Which kinds are built into the API server (and so accept strategic merge patches and get typed
 * defaulting), and the schema of each. A kind not in this table is treated as a custom resource:
 * JSON merge semantics, lists atomic. That is also the safe answer for a built-in kind newer than
 * this table: every kind accepts a JSON merge patch.
 */
import {
  BytesMap,
  EndpointPorts,
  JobSpec,
  LabelSelector,
  LimitRangeItems,
  MetricSpecs,
  NetworkPolicyRules,
  ObjectMeta,
  PersistentVolumeClaimSpec,
  PersistentVolumeClaimTemplates,
  PodSpecOfPod,
  PodTemplateSpec,
  QuantityMap,
  ServicePorts,
  StatusWithConditions,
  StringMap,
  SelectorWhereEmptyMatchesAll,
  Subjects,
  MatchResources,
  Webhooks,
  byName,
} from "./merge-keys.ts";
import type { FieldSchema } from "./schema.ts";

export const PatchType = {
  StrategicMerge: "strategic-merge",
  Merge: "merge",
} as const;
export type PatchType = (typeof PatchType)[keyof typeof PatchType];

/** The Content-Type to send each patch type with. */
export const PATCH_CONTENT_TYPE: Readonly<Record<PatchType, string>> = {
  "strategic-merge": "application/strategic-merge-patch+json",
  merge: "application/merge-patch+json",
};

export interface KindInfo {
  readonly group: string;
  readonly kind: string;
  readonly builtIn: boolean;
  readonly patchType: PatchType;
  readonly schema: FieldSchema;
}

const object = (fields: Record<string, FieldSchema> = {}): FieldSchema => ({
  fields: { metadata: ObjectMeta, status: StatusWithConditions, ...fields },
});
const spec = (fields: Record<string, FieldSchema>): FieldSchema => object({ spec: { fields } });

const workload = spec({ selector: LabelSelector, template: PodTemplateSpec });
const deployment = spec({ selector: LabelSelector, template: PodTemplateSpec, strategy: { retainKeys: true } });
const statefulSet = spec({
  selector: LabelSelector,
  template: PodTemplateSpec,
  volumeClaimTemplates: PersistentVolumeClaimTemplates,
});
const networkPolicy = spec({
  podSelector: LabelSelector,
  ingress: NetworkPolicyRules("from"),
  egress: NetworkPolicyRules("to"),
});
const webhookConfiguration = object({ webhooks: Webhooks });
const plain = object();

/** group → kind → schema. */
const BUILT_IN: Readonly<Record<string, Readonly<Record<string, FieldSchema>>>> = {
  "": {
    Pod: spec(PodSpecOfPod.fields ?? {}),
    PodTemplate: object({ template: PodTemplateSpec }),
    ReplicationController: spec({ selector: StringMap, template: PodTemplateSpec }),
    Service: spec({ ports: ServicePorts, selector: StringMap }),
    Endpoints: object({ subsets: { items: { fields: { ports: EndpointPorts } } } }),
    ConfigMap: object({ data: StringMap, binaryData: BytesMap }),
    Secret: object({ data: BytesMap, stringData: StringMap }),
    Namespace: plain,
    ServiceAccount: object({ secrets: byName() }),
    PersistentVolumeClaim: object({ spec: PersistentVolumeClaimSpec }),
    PersistentVolume: spec({ capacity: QuantityMap }),
    ResourceQuota: spec({ hard: QuantityMap }),
    LimitRange: spec({ limits: LimitRangeItems }),
    Node: spec({ podCIDRs: { list: "set" } }),
    Event: plain,
  },
  apps: {
    Deployment: deployment,
    ReplicaSet: workload,
    DaemonSet: workload,
    StatefulSet: statefulSet,
    ControllerRevision: plain,
  },
  batch: {
    Job: object({ spec: JobSpec }),
    CronJob: spec({ jobTemplate: { fields: { metadata: ObjectMeta, spec: JobSpec } } }),
  },
  autoscaling: { HorizontalPodAutoscaler: spec({ metrics: MetricSpecs }) },
  "rbac.authorization.k8s.io": {
    Role: plain,
    ClusterRole: plain,
    RoleBinding: object({ subjects: Subjects }),
    ClusterRoleBinding: object({ subjects: Subjects }),
  },
  "networking.k8s.io": {
    NetworkPolicy: networkPolicy,
    Ingress: plain,
    IngressClass: plain,
    IPAddress: plain,
    ServiceCIDR: plain,
  },
  // The pre-1.16 home of the workload and networking kinds, still seen in old manifests.
  extensions: {
    Deployment: deployment,
    DaemonSet: workload,
    ReplicaSet: workload,
    Ingress: plain,
    NetworkPolicy: networkPolicy,
  },
  policy: { PodDisruptionBudget: spec({ selector: SelectorWhereEmptyMatchesAll }), PodSecurityPolicy: plain },
  "storage.k8s.io": {
    StorageClass: object({ parameters: StringMap }),
    VolumeAttachment: plain,
    CSIDriver: plain,
    CSINode: plain,
    CSIStorageCapacity: object({ capacity: { quantity: true }, maximumVolumeSize: { quantity: true } }),
    VolumeAttributesClass: object({ parameters: StringMap }),
  },
  "scheduling.k8s.io": { PriorityClass: plain },
  "coordination.k8s.io": { Lease: plain, LeaseCandidate: plain },
  "discovery.k8s.io": { EndpointSlice: object({ ports: EndpointPorts }) },
  "admissionregistration.k8s.io": {
    ValidatingWebhookConfiguration: webhookConfiguration,
    MutatingWebhookConfiguration: webhookConfiguration,
    ValidatingAdmissionPolicy: spec({ matchConstraints: MatchResources }),
    ValidatingAdmissionPolicyBinding: spec({ matchResources: MatchResources }),
    MutatingAdmissionPolicy: spec({ matchConstraints: MatchResources }),
    MutatingAdmissionPolicyBinding: spec({ matchResources: MatchResources }),
  },
  "apiextensions.k8s.io": { CustomResourceDefinition: plain },
  "apiregistration.k8s.io": { APIService: plain },
  "certificates.k8s.io": { CertificateSigningRequest: plain, ClusterTrustBundle: plain },
  "resource.k8s.io": { ResourceClaim: plain, ResourceClaimTemplate: plain, DeviceClass: plain, ResourceSlice: plain },
  "node.k8s.io": { RuntimeClass: object({ overhead: { fields: { podFixed: QuantityMap } } }) },
  "events.k8s.io": { Event: plain },
  "flowcontrol.apiserver.k8s.io": { FlowSchema: plain, PriorityLevelConfiguration: plain },
};

/** Every custom resource still has typed `metadata`: labels, finalizers and owner references merge. */
const CUSTOM_RESOURCE: FieldSchema = { fields: { metadata: ObjectMeta } };

export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}

export function resolveKind(apiVersion: string | undefined, kind: string | undefined): KindInfo {
  const group = apiVersion === undefined ? "" : groupOf(apiVersion);
  const k = kind ?? "";
  const schema = Object.hasOwn(BUILT_IN, group) ? BUILT_IN[group]?.[k] : undefined;
  if (schema && Object.hasOwn(BUILT_IN[group] ?? {}, k)) {
    return { group, kind: k, builtIn: true, patchType: PatchType.StrategicMerge, schema };
  }
  return { group, kind: k, builtIn: false, patchType: PatchType.Merge, schema: CUSTOM_RESOURCE };
}

/** The built-in group-kinds this table knows, as `group/Kind` (`/Pod` for the core group). */
export function builtInGroupKinds(): string[] {
  return Object.entries(BUILT_IN).flatMap(([group, kinds]) => Object.keys(kinds).map((k) => `${group}/${k}`));
}
