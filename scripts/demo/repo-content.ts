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

/** path → content of the first commit. */
export function initialFiles(): Record<string, string> {
  return {
    "platform/namespaces.yaml": `${namespace(platformNamespace)}---\n${namespace(teamNamespace)}`,
    "platform/platform-config.yaml": configMap("platform-config", platformNamespace, { color: "blue", replicas: "3" }),
    "platform/feature-flags.yaml": configMap("feature-flags", platformNamespace, { "new-ui": "false" }),
    "team/team-settings.yaml": configMap("team-settings", undefined, { owner: "team-a", "on-call": "alice" }),
    "team/welcome.yaml": configMap("welcome", undefined, { message: "hello from git" }),
  };
}
