/**
 * Mappings of core kinds that code and tests use by name. Their group, version and resource are
 * fixed by Kubernetes, so they need no discovery; everything else is mapped by RestMapper.
 */
import type { ResourceMapping } from "./types.ts";

const verbs = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"] as const;

export const configMapMapping: ResourceMapping = {
  group: "",
  version: "v1",
  kind: "ConfigMap",
  resource: "configmaps",
  namespaced: true,
  verbs: [...verbs],
};

export const namespaceMapping: ResourceMapping = {
  group: "",
  version: "v1",
  kind: "Namespace",
  resource: "namespaces",
  namespaced: false,
  verbs: [...verbs],
};
