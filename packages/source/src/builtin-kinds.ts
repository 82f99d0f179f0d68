/**
 * The scope of Kubernetes' built-in kinds (v1.34) and of the kinds Config Sync installs, for reading
 * a source without a cluster (`driftless hydrate`, `driftless vet`), as `nomos` does with its
 * built-in scopes. A reconciler asks discovery instead.
 */
import type { KindInfo, KindResolver } from "./kinds.ts";
import { splitApiVersion } from "./manifest.ts";

const namespaced: Readonly<Record<string, readonly string[]>> = {
  "": [
    "Binding",
    "ConfigMap",
    "Endpoints",
    "Event",
    "LimitRange",
    "PersistentVolumeClaim",
    "Pod",
    "PodTemplate",
    "ReplicationController",
    "ResourceQuota",
    "Secret",
    "Service",
    "ServiceAccount",
  ],
  apps: ["ControllerRevision", "DaemonSet", "Deployment", "ReplicaSet", "StatefulSet"],
  "authorization.k8s.io": ["LocalSubjectAccessReview"],
  autoscaling: ["HorizontalPodAutoscaler"],
  batch: ["CronJob", "Job"],
  "coordination.k8s.io": ["Lease", "LeaseCandidate"],
  "discovery.k8s.io": ["EndpointSlice"],
  "events.k8s.io": ["Event"],
  "networking.k8s.io": ["Ingress", "NetworkPolicy"],
  policy: ["PodDisruptionBudget", "Eviction"],
  "rbac.authorization.k8s.io": ["Role", "RoleBinding"],
  "resource.k8s.io": ["ResourceClaim", "ResourceClaimTemplate"],
  "storage.k8s.io": ["CSIStorageCapacity"],
  "configsync.gke.io": ["RootSync", "RepoSync"],
  "kpt.dev": ["ResourceGroup"],
};

const clusterScoped: Readonly<Record<string, readonly string[]>> = {
  "": ["ComponentStatus", "Namespace", "Node", "PersistentVolume"],
  "admissionregistration.k8s.io": [
    "MutatingAdmissionPolicy",
    "MutatingAdmissionPolicyBinding",
    "MutatingWebhookConfiguration",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration",
  ],
  "apiextensions.k8s.io": ["CustomResourceDefinition"],
  "apiregistration.k8s.io": ["APIService"],
  "authentication.k8s.io": ["SelfSubjectReview", "TokenReview"],
  "authorization.k8s.io": ["SelfSubjectAccessReview", "SelfSubjectRulesReview", "SubjectAccessReview"],
  "certificates.k8s.io": ["CertificateSigningRequest", "ClusterTrustBundle"],
  // As nomos scopes them offline: of a version selection does not read, these are objects like any other.
  "clusterregistry.k8s.io": ["Cluster"],
  "configmanagement.gke.io": ["ClusterSelector", "NamespaceSelector"],
  "flowcontrol.apiserver.k8s.io": ["FlowSchema", "PriorityLevelConfiguration"],
  "internal.apiserver.k8s.io": ["StorageVersion"],
  "networking.k8s.io": ["IngressClass", "IPAddress", "ServiceCIDR"],
  "node.k8s.io": ["RuntimeClass"],
  "rbac.authorization.k8s.io": ["ClusterRole", "ClusterRoleBinding"],
  "resource.k8s.io": ["DeviceClass", "ResourceSlice"],
  "scheduling.k8s.io": ["PriorityClass"],
  "storage.k8s.io": ["CSIDriver", "CSINode", "StorageClass", "VolumeAttachment", "VolumeAttributesClass"],
  "storagemigration.k8s.io": ["StorageVersionMigration"],
};

const table = new Map<string, { readonly resource: string; readonly namespaced: boolean }>();
for (const [scope, isNamespaced] of [
  [namespaced, true],
  [clusterScoped, false],
] as const) {
  for (const [group, kinds] of Object.entries(scope)) {
    for (const kind of kinds) table.set(`${group}/${kind}`, { resource: plural(kind), namespaced: isNamespaced });
  }
}

/** Kubernetes' plural for these kinds: Endpoints stays, -s takes -es, consonant + y takes -ies. */
function plural(kind: string): string {
  const lower = kind.toLowerCase();
  if (lower === "endpoints") return lower;
  if (lower.endsWith("s")) return `${lower}es`;
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}

/** Resolves built-in kinds at any version; anything else is unknown. */
export const builtinKinds: KindResolver = {
  resolveKind(apiVersion: string, kind: string): KindInfo | undefined {
    const gv = splitApiVersion(apiVersion);
    if (gv === undefined) return undefined;
    const found = table.get(`${gv.group}/${kind}`);
    return found === undefined ? undefined : { group: gv.group, version: gv.version, ...found };
  },
};
