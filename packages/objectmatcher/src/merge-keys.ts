/**
 * Strategic-merge facts of the built-in Kubernetes types, as published in their OpenAPI schemas
 * (`x-kubernetes-patch-merge-key`, `x-kubernetes-patch-strategy`, `x-kubernetes-list-map-keys`), plus
 * the values the API server fills in inside lists that compare whole. Only paths that matter for
 * matching are described: everything else is a map or an atomic list.
 */
import type { FieldSchema } from "./schema.ts";

const keepEmpty: FieldSchema = { keepEmpty: true };
/** `map[string]string`: an empty value is a value (Go keeps it; only the whole empty map is omitted). */
export const StringMap: FieldSchema = { values: keepEmpty };
/** `map[string][]byte`: base64 on the wire; an empty value is an empty file. */
export const BytesMap: FieldSchema = { values: { keepEmpty: true, base64: true } };
const Quantity: FieldSchema = { quantity: true };
const QuantityMap: FieldSchema = { values: Quantity };
const byName = (items?: FieldSchema): FieldSchema => ({ list: "map", keys: ["name"], ...(items ? { items } : {}) });
/** A port's protocol is part of its identity and defaults to TCP. */
const PortItem: FieldSchema = { defaults: { protocol: "TCP" } };
const StatusWithConditions: FieldSchema = { fields: { conditions: { list: "map", keys: ["type"] } } };

export const ObjectMeta: FieldSchema = {
  fields: {
    labels: StringMap,
    annotations: StringMap,
    finalizers: { list: "set" },
    ownerReferences: { list: "map", keys: ["uid"] },
  },
};

export const LabelSelector: FieldSchema = { fields: { matchLabels: StringMap } };
/** A selector where `{}` (everything) differs from none at all (nothing, or "this namespace"). */
export const SelectorWhereEmptyMatchesAll: FieldSchema = { ...LabelSelector, presence: true };

const PodAffinityTerm: FieldSchema = {
  fields: { labelSelector: SelectorWhereEmptyMatchesAll, namespaceSelector: SelectorWhereEmptyMatchesAll },
};
const podAffinity: FieldSchema = {
  fields: {
    requiredDuringSchedulingIgnoredDuringExecution: { items: PodAffinityTerm },
    preferredDuringSchedulingIgnoredDuringExecution: { items: { fields: { podAffinityTerm: PodAffinityTerm } } },
  },
};
const Affinity: FieldSchema = { fields: { podAffinity, podAntiAffinity: podAffinity } };

const ResourceRequirements: FieldSchema = { fields: { limits: QuantityMap, requests: QuantityMap } };

const Container: FieldSchema = {
  fields: {
    ports: { list: "map", keys: ["containerPort", "protocol"], items: PortItem },
    env: byName(),
    volumeMounts: { list: "map", keys: ["mountPath"] },
    volumeDevices: { list: "map", keys: ["devicePath"] },
    resources: ResourceRequirements,
  },
};

/** A downward-API file: the API server defaults `fieldRef.apiVersion` to v1 inside an atomic list. */
/**
 * A downward-API file: the API server defaults `fieldRef.apiVersion` to v1 and `resourceFieldRef.divisor`
 * to 0 inside an atomic list.
 */
const DownwardApiFiles: FieldSchema = {
  items: {
    serverFilled: [
      ["fieldRef", "apiVersion"],
      ["resourceFieldRef", "divisor"],
    ],
  },
};

const PersistentVolumeClaimSpec: FieldSchema = { fields: { resources: ResourceRequirements } };

const Volume: FieldSchema = {
  // VolumeSource is a one-of: switching source must clear the old one.
  retainKeys: true,
  fields: {
    emptyDir: { presence: true, fields: { sizeLimit: Quantity } },
    downwardAPI: { fields: { items: DownwardApiFiles } },
    projected: {
      fields: {
        sources: {
          items: {
            // The API server defaults a projected service-account token to one hour.
            serverFilled: [["serviceAccountToken", "expirationSeconds"]],
            fields: { downwardAPI: { fields: { items: DownwardApiFiles } } },
          },
        },
      },
    },
    ephemeral: {
      fields: { volumeClaimTemplate: { fields: { metadata: ObjectMeta, spec: PersistentVolumeClaimSpec } } },
    },
  },
};

const podSpecFields = {
  containers: byName(Container),
  initContainers: byName(Container),
  ephemeralContainers: byName(Container),
  volumes: byName(Volume),
  imagePullSecrets: byName(),
  hostAliases: { list: "map", keys: ["ip"] },
  topologySpreadConstraints: {
    list: "map",
    keys: ["topologyKey", "whenUnsatisfiable"],
    items: { fields: { labelSelector: SelectorWhereEmptyMatchesAll } },
  },
  affinity: Affinity,
  resourceClaims: byName({ retainKeys: true }),
  schedulingGates: byName(),
  nodeSelector: StringMap,
  overhead: QuantityMap,
  resources: ResourceRequirements,
} as const satisfies Record<string, FieldSchema>;

export const PodSpec: FieldSchema = { fields: podSpecFields };

/** The two tolerations the DefaultTolerationSeconds admission plugin appends to every new Pod. */
export const DEFAULT_POD_TOLERATIONS = [
  { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
  { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
] as const;

/** A Pod as stored: admission has appended default tolerations to whatever was declared. */
export const PodSpecOfPod: FieldSchema = {
  fields: { ...podSpecFields, tolerations: { admissionItems: DEFAULT_POD_TOLERATIONS.map((t) => ({ ...t })) } },
};

export const PodTemplateSpec: FieldSchema = { fields: { metadata: ObjectMeta, spec: PodSpec } };

export const PersistentVolumeClaimTemplates: FieldSchema = {
  items: {
    // The StatefulSet strategy fills type meta, volumeMode and an empty status into each template.
    serverFilled: [["apiVersion"], ["kind"], ["status"], ["spec", "volumeMode"]],
    fields: { metadata: ObjectMeta, spec: PersistentVolumeClaimSpec },
  },
};

export const JobSpec: FieldSchema = {
  fields: {
    selector: LabelSelector,
    template: PodTemplateSpec,
    // A pod-failure rule's condition status defaults to "True" inside the atomic `rules` list.
    podFailurePolicy: {
      fields: { rules: { items: { fields: { onPodConditions: { items: { serverFilled: [["status"]] } } } } } },
    },
  },
};

/** RBAC subjects: a User or Group subject gets `apiGroup: rbac.authorization.k8s.io` inside the atomic list. */
export const Subjects: FieldSchema = { items: { serverFilled: [["apiGroup"]] } };

/** Admission policy resource rules: `scope` defaults to "*" inside atomic lists. */
const ResourceRules: FieldSchema = { items: { serverFilled: [["scope"]] } };
export const MatchResources: FieldSchema = {
  fields: {
    namespaceSelector: LabelSelector,
    objectSelector: LabelSelector,
    resourceRules: ResourceRules,
    excludeResourceRules: ResourceRules,
  },
};

const MetricTarget: FieldSchema = { fields: { value: Quantity, averageValue: Quantity } };
const withTarget: FieldSchema = { fields: { target: MetricTarget } };
export const MetricSpecs: FieldSchema = {
  items: {
    fields: {
      resource: withTarget,
      containerResource: withTarget,
      pods: withTarget,
      object: withTarget,
      external: withTarget,
    },
  },
};

const NetworkPolicyPeer: FieldSchema = {
  fields: { podSelector: SelectorWhereEmptyMatchesAll, namespaceSelector: SelectorWhereEmptyMatchesAll },
};
export const NetworkPolicyRules = (peers: "from" | "to"): FieldSchema => ({
  items: { fields: { ports: { items: PortItem }, [peers]: { items: NetworkPolicyPeer } } },
});

export const Webhooks: FieldSchema = byName({
  fields: {
    namespaceSelector: LabelSelector,
    objectSelector: LabelSelector,
    // RuleWithOperations.scope defaults to "*" inside the atomic `rules` list.
    rules: { items: { serverFilled: [["scope"]] } },
    matchConditions: byName(),
  },
});

export const LimitRangeItems: FieldSchema = {
  items: {
    // For type Container, the API server copies max into default and default into defaultRequest.
    serverFilled: [["default"], ["defaultRequest"]],
    fields: {
      max: QuantityMap,
      min: QuantityMap,
      default: QuantityMap,
      defaultRequest: QuantityMap,
      maxLimitRequestRatio: QuantityMap,
    },
  },
};

export const ServicePorts: FieldSchema = { list: "map", keys: ["port", "protocol"], items: PortItem };
export const EndpointPorts: FieldSchema = { items: PortItem };
export { Quantity, QuantityMap, PersistentVolumeClaimSpec, StatusWithConditions, ResourceRequirements, byName };
