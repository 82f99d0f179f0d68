import type { ResourceMapping } from "@driftless/kube";

export const resourceGroupMapping: ResourceMapping = {
  group: "kpt.dev",
  version: "v1alpha1",
  kind: "ResourceGroup",
  resource: "resourcegroups",
  namespaced: true,
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
};
