/**
 * What the Go types cannot say: values the API server's defaulting and admission fill in where a
 * declaration is compared whole (atomic lists), and defaults that are part of a list item's identity.
 * Everything else about the built-in kinds comes from the generated facts (`facts.ts`). Keyed by Go
 * package and type, any version (`core.ContainerPort`).
 */
import type { FieldSchema } from "./schema.ts";

type Overlay = Pick<FieldSchema, "defaults" | "serverFilled">;

/** A port's protocol is part of its identity (`80/TCP` and `80/UDP` are two ports) and defaults to TCP. */
const TCP: Overlay = { defaults: { protocol: "TCP" } };

const OVERLAYS: Readonly<Record<string, Overlay>> = {
  "core.ContainerPort": TCP,
  "core.ServicePort": TCP,
  "core.EndpointPort": TCP,
  "discovery.EndpointPort": TCP,
  "networking.NetworkPolicyPort": TCP,
  "extensions.NetworkPolicyPort": TCP,
  // Downward API files (atomic list): fieldRef.apiVersion defaults to v1, resourceFieldRef.divisor to 0.
  "core.DownwardAPIVolumeFile": {
    serverFilled: [
      ["fieldRef", "apiVersion"],
      ["resourceFieldRef", "divisor"],
    ],
  },
  // A projected service-account token (atomic list of sources) defaults to one hour.
  "core.VolumeProjection": { serverFilled: [["serviceAccountToken", "expirationSeconds"]] },
  // The StatefulSet strategy fills type meta, volumeMode and an empty status into each volumeClaimTemplate.
  "core.PersistentVolumeClaim": { serverFilled: [["apiVersion"], ["kind"], ["status"], ["spec", "volumeMode"]] },
  // For type Container, the API server copies max into default and default into defaultRequest.
  "core.LimitRangeItem": { serverFilled: [["default"], ["defaultRequest"]] },
  // A pod-failure rule's condition status defaults to "True" inside the atomic `rules` list.
  "batch.PodFailurePolicyOnPodConditionsPattern": { serverFilled: [["status"]] },
  // A User or Group subject gets `apiGroup: rbac.authorization.k8s.io` inside the atomic `subjects` list.
  "rbac.Subject": { serverFilled: [["apiGroup"]] },
  // Admission rules' `scope` defaults to "*" inside atomic lists.
  "admissionregistration.RuleWithOperations": { serverFilled: [["scope"]] },
  "admissionregistration.NamedRuleWithOperations": { serverFilled: [["scope"]] },
};

/** `core/v1.Volume` → `core.Volume`. */
export function packageAndType(name: string): string {
  const slash = name.indexOf("/");
  const dot = name.lastIndexOf(".");
  return slash < 0 || dot < 0 ? name : `${name.slice(0, slash)}.${name.slice(dot + 1)}`;
}

/** `core/v1.ContainerPort` → its overlay, if any. */
export function structOverlay(name: string): Overlay | undefined {
  return OVERLAYS[packageAndType(name)];
}

/** The two tolerations the DefaultTolerationSeconds admission plugin appends to every new Pod (not templates). */
export const DEFAULT_POD_TOLERATIONS = [
  { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
  { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
] as const;
