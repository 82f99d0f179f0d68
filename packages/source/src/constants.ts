/**
 * Strings only the source reader needs. Annotation keys and values shared with other packages come
 * from @driftless/api.
 */

/** RBAC objects may use any path-segment name (e.g. `system:aggregate-to-edit`), not just DNS names. */
export const RbacGroup = "rbac.authorization.k8s.io";

/** Config Sync's own group: its objects carry a status in Git (Repo, HierarchyConfig), so it is allowed there. */
export const ConfigManagementGroup = "configmanagement.gke.io";

export const CrdGroup = "apiextensions.k8s.io";
export const CrdKind = "CustomResourceDefinition";

/** Where a RootSync puts a namespaced object that names no namespace (Config Sync does the same). */
export const DefaultNamespace = "default";
