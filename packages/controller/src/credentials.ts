/**
 * Credentials for a reconciler child process: a token minted for the reconciler's own
 * ServiceAccount (TokenRequest API) in a kubeconfig of its own. A child then has exactly the
 * permissions its Deployment would have in cluster mode, never the manager's.
 */
import { readFileSync } from "node:fs";
import { rename, writeFile } from "node:fs/promises";
import { KubeConfig } from "@kubernetes/client-node";
import type { KubeClient } from "@driftless/kube";

/** Where the API server is and how to trust it, copied from the manager's own kubeconfig. */
export interface ClusterAccess {
  readonly server: string;
  /** Base64 PEM, or undefined to use the system roots. */
  readonly caData: string | undefined;
  readonly insecureSkipTlsVerify: boolean;
}

export function readClusterAccess(kubeconfig: string | undefined): ClusterAccess {
  const kc = new KubeConfig();
  if (kubeconfig !== undefined) kc.loadFromFile(kubeconfig);
  else if (process.env["KUBERNETES_SERVICE_HOST"] !== undefined) kc.loadFromCluster();
  else kc.loadFromDefault();
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new Error(`kubeconfig ${kubeconfig ?? "(default)"} has no current cluster`);
  const caData =
    cluster.caData ?? (cluster.caFile !== undefined ? readFileSync(cluster.caFile).toString("base64") : undefined);
  return { server: cluster.server, caData, insecureSkipTlsVerify: cluster.skipTLSVerify };
}

export interface MintedToken {
  readonly token: string;
  readonly expiresAt: Date;
}

/** A bound token for `namespace/serviceAccount`, valid for about `expirationSeconds` (the server may shorten it). */
export async function mintToken(
  client: KubeClient,
  namespace: string,
  serviceAccount: string,
  expirationSeconds: number,
): Promise<MintedToken> {
  const response = await client.request<{ status?: { token?: unknown; expirationTimestamp?: unknown } }>({
    method: "POST",
    path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(serviceAccount)}/token`,
    body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds } },
  });
  const token = response.status?.token;
  const expires = response.status?.expirationTimestamp;
  if (typeof token !== "string" || token === "")
    throw new Error(`TokenRequest for ${namespace}/${serviceAccount} returned no token`);
  const expiresAt = typeof expires === "string" ? new Date(expires) : new Date(Date.now() + expirationSeconds * 1000);
  return { token, expiresAt };
}

/** Writes a kubeconfig with the token, readable by the owner only, atomically (a child never reads half a file). */
export async function writeKubeconfig(path: string, access: ClusterAccess, user: string, token: string): Promise<void> {
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: "cluster",
        cluster: {
          server: access.server,
          ...(access.caData === undefined ? {} : { "certificate-authority-data": access.caData }),
          ...(access.insecureSkipTlsVerify ? { "insecure-skip-tls-verify": true } : {}),
        },
      },
    ],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: user, context: { cluster: "cluster", user } }],
    "current-context": user,
  };
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(config, null, 2), { mode: 0o600 });
  await rename(tmp, path);
}
