/**
 * Strings the source reader needs. Defined locally until @driftless/api exports them (architecture.md,
 * "Honoured user annotations"); they will be unified there and imported from it then.
 */

/** Ordering hints between objects, `group/namespaces/ns/Kind/name` or `group/Kind/name`, comma-separated. */
export const DependsOnAnnotation = "config.kubernetes.io/depends-on";

/**
 * Marks a manifest as client-side configuration (kpt function configs and similar). Like Config Sync,
 * any value except "false" means the object is never applied.
 */
export const LocalConfigAnnotation = "config.kubernetes.io/local-config";
export const LocalConfigDisabledValue = "false";

/** RBAC objects may use any path-segment name (e.g. `system:aggregate-to-edit`), not just DNS names. */
export const RbacGroup = "rbac.authorization.k8s.io";

/** Config Sync's own group: its objects carry a status in Git (Repo, HierarchyConfig), so it is allowed there. */
export const ConfigManagementGroup = "configmanagement.gke.io";

export const CrdGroup = "apiextensions.k8s.io";
export const CrdKind = "CustomResourceDefinition";

/** Where a RootSync puts a namespaced object that names no namespace (Config Sync does the same). */
export const DefaultNamespace = "default";
