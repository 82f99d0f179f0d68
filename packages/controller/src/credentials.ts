/**
 * Credentials for a reconciler child process: a token minted for the reconciler's own
 * ServiceAccount (TokenRequest API), in a token file its kubeconfig points to. A child then has
 * exactly the permissions its Deployment would have in cluster mode, never the manager's; the
 * manager rewrites the file before the token expires, and the child re-reads it (as a pod does
 * with its projected token).
 */
import { randomBytes } from "node:crypto";
import { rename, rm, writeFile } from "node:fs/promises";
import { readKubeconfigCluster, type KubeClient } from "@driftless/kube";

/** Where the API server is and how to trust it, copied from the manager's own kubeconfig. */
export interface ClusterAccess {
  readonly server: string;
  /** Base64 PEM, or undefined to use the system roots. */
  readonly caData: string | undefined;
  readonly insecureSkipTlsVerify: boolean;
}

/**
 * The current context's cluster, read with the same rules as the manager's own client (a file;
 * else in-cluster; else $KUBECONFIG or ~/.kube/config), whatever authentication the manager uses.
 */
export function readClusterAccess(kubeconfig: string | undefined): ClusterAccess {
  const cluster = readKubeconfigCluster(kubeconfig);
  return {
    server: cluster.server,
    caData: cluster.caPem === undefined ? undefined : Buffer.from(cluster.caPem).toString("base64"),
    insecureSkipTlsVerify: cluster.insecureSkipTlsVerify,
  };
}

export interface MintedToken {
  readonly token: string;
  readonly expiresAt: Date;
}

/** A bound token for `namespace/serviceAccount`, valid for about `expirationSeconds` (the server may shorten it). */
export async function mintToken(
  client: Pick<KubeClient, "request">,
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

/**
 * Writes `content` so that a reader never sees half of it, readable by the owner only. The temporary
 * file is always a new one ('wx'): writing into a file someone else made keeps their owner and mode,
 * so they could read the token. Its random name also keeps two writes of one path apart.
 */
async function writeAtomically(path: string, content: string): Promise<void> {
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    await writeFile(tmp, content, { mode: 0o600, flag: "wx" });
    await rename(tmp, path);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}

export function writeToken(path: string, token: string): Promise<void> {
  return writeAtomically(path, token);
}

/** A kubeconfig whose user reads its token from `tokenFile` (re-read by the client every minute and after a 401). */
export async function writeKubeconfig(
  path: string,
  access: ClusterAccess,
  user: string,
  tokenFile: string,
): Promise<void> {
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
    users: [{ name: user, user: { tokenFile } }],
    contexts: [{ name: user, context: { cluster: "cluster", user } }],
    "current-context": user,
  };
  await writeAtomically(path, JSON.stringify(config, null, 2));
}
