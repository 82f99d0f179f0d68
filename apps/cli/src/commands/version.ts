import { readFile } from "node:fs/promises";
import { KubeClient, type KubeObject, type ResourceMapping } from "@driftless/kube";

const deployments: ResourceMapping = {
  group: "apps",
  version: "v1",
  kind: "Deployment",
  resource: "deployments",
  namespaced: true,
  verbs: ["get"],
};

/** Where `nomos version` looks for the manager too: this Deployment, and in it a container of the same name. */
export const ManagerDeployment = { namespace: "config-management-system", name: "reconciler-manager" } as const;

/** The CLI's own version, from its package.json. */
export async function cliVersion(): Promise<string> {
  const pkg = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as {
    version?: string;
  };
  return pkg.version ?? "unknown";
}

/** The tag of the manager container's image (`driftless:0.1.0` → `0.1.0`; a digest when pinned by one). */
export function imageVersion(image: string): string {
  const at = image.indexOf("@");
  if (at >= 0) return image.slice(at + 1);
  const name = image.slice(image.lastIndexOf("/") + 1);
  const colon = name.lastIndexOf(":");
  return colon >= 0 ? name.slice(colon + 1) : "latest";
}

/**
 * `driftless version`: the CLI's version and, from the cluster, the manager's. As `nomos version`, exit 0
 * whether or not a cluster answered (the table says why not) or a kubeconfig exists; 1 only for a
 * kubeconfig that cannot be read, nomos's `unable to parse kubectl config`.
 */
export async function version(kubeconfig: string | undefined, out: (line: string) => void): Promise<number> {
  out(`${"COMPONENT".padEnd(20)} VERSION`);
  out(`${"driftless CLI".padEnd(20)} ${await cliVersion()}`);
  let client: KubeClient;
  try {
    client = await KubeClient.fromKubeconfig(kubeconfig);
  } catch (error) {
    const missing = isMissingFile(error);
    out(`${ManagerDeployment.name.padEnd(20)} unknown (${missing ? "no kubeconfig: " : ""}${messageOf(error)})`);
    return missing ? 0 : 1;
  }
  let manager: string;
  try {
    manager = managerVersion(await client.get(deployments, ManagerDeployment.namespace, ManagerDeployment.name));
  } catch (error) {
    manager = `unknown (${messageOf(error)})`;
  } finally {
    client.close();
  }
  out(`${ManagerDeployment.name.padEnd(20)} ${manager}`);
  return 0;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function isMissingFile(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "ENOENT";
}

function managerVersion(deployment: KubeObject | undefined): string {
  if (deployment === undefined)
    return `not installed (no Deployment ${ManagerDeployment.namespace}/${ManagerDeployment.name})`;
  const containers =
    (deployment["spec"] as { template?: { spec?: { containers?: { name?: string; image?: string }[] } } } | undefined)
      ?.template?.spec?.containers ?? [];
  const container = containers.find((c) => c.name === ManagerDeployment.name);
  if (container?.image === undefined) return `unknown (no container named ${ManagerDeployment.name} in the Deployment)`;
  return `${imageVersion(container.image)} (image ${container.image})`;
}
