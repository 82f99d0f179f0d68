/** The demo's Git repository: a platform directory for the RootSync and a team directory for the RepoSync. */
export const platformNamespace = "demo";
export const teamNamespace = "demo-team";

export function namespace(name: string): string {
  return `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n`;
}

export function configMap(
  name: string,
  namespaceName: string | undefined,
  data: Readonly<Record<string, string>>,
): string {
  const ns = namespaceName === undefined ? "" : `\n  namespace: ${namespaceName}`;
  const body = Object.entries(data)
    .map(([k, v]) => `  ${k}: "${v}"`)
    .join("\n");
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}${ns}\ndata:\n${body}\n`;
}

/**
 * What a platform admin declares for a RepoSync, as Config Sync documents: the namespace
 * reconciler gets only its base role from the manager; this RoleBinding lets it apply in its
 * namespace (the `edit` ClusterRole), and nowhere else.
 */
export function repoSyncRoleBinding(namespaceName: string): string {
  return [
    "apiVersion: rbac.authorization.k8s.io/v1",
    "kind: RoleBinding",
    "metadata:",
    "  name: syncs-repo",
    `  namespace: ${namespaceName}`,
    "roleRef:",
    "  apiGroup: rbac.authorization.k8s.io",
    "  kind: ClusterRole",
    "  name: edit",
    "subjects:",
    "  - kind: ServiceAccount",
    `    name: ns-reconciler-${namespaceName}`,
    "    namespace: config-management-system",
    "",
  ].join("\n");
}

/** path → content of the first commit. */
export function initialFiles(): Record<string, string> {
  return {
    "platform/namespaces.yaml": `${namespace(platformNamespace)}---\n${namespace(teamNamespace)}`,
    "platform/team-reconciler-rolebinding.yaml": repoSyncRoleBinding(teamNamespace),
    "platform/platform-config.yaml": configMap("platform-config", platformNamespace, { color: "blue", replicas: "3" }),
    "platform/feature-flags.yaml": configMap("feature-flags", platformNamespace, { "new-ui": "false" }),
    "team/team-settings.yaml": configMap("team-settings", undefined, { owner: "team-a", "on-call": "alice" }),
    "team/welcome.yaml": configMap("welcome", undefined, { message: "hello from git" }),
  };
}
