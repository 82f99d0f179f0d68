/**
 * Credentials for a reconciler child process: a token minted for the reconciler's own
 * ServiceAccount (TokenRequest API), in a token file its kubeconfig points to. A child then has
 * exactly the permissions its Deployment would have in cluster mode, never the manager's; the
 * manager rewrites the file before the token expires, and the child re-reads it (as a pod does
 * with its projected token).
 */
import { existsSync, readFileSync } from "node:fs";
import { rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { parse } from "yaml";
import type { KubeClient } from "@driftless/kube";

/** Where the API server is and how to trust it, copied from the manager's own kubeconfig. */
export interface ClusterAccess {
  readonly server: string;
  /** Base64 PEM, or undefined to use the system roots. */
  readonly caData: string | undefined;
  readonly insecureSkipTlsVerify: boolean;
}

interface KubeconfigClusters {
  "current-context"?: string;
  contexts?: { name?: string; context?: { cluster?: string } }[];
  clusters?: {
    name?: string;
    cluster?: {
      server?: string;
      "certificate-authority"?: string;
      "certificate-authority-data"?: string;
      "insecure-skip-tls-verify"?: boolean;
    };
  }[];
}

const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

/**
 * The current context's cluster, read with the same rules as the manager's own client (a file;
 * else in-cluster; else $KUBECONFIG or ~/.kube/config). Only the cluster part is needed, so no
 * kubeconfig library is loaded for it (client-node alone costs ~85 MiB of resident memory).
 */
export function readClusterAccess(kubeconfig: string | undefined): ClusterAccess {
  if (kubeconfig === undefined && process.env["KUBERNETES_SERVICE_HOST"] !== undefined) {
    const host = process.env["KUBERNETES_SERVICE_HOST"];
    const port = process.env["KUBERNETES_SERVICE_PORT"] ?? "443";
    return {
      server: `https://${host.includes(":") ? `[${host}]` : host}:${port}`,
      caData: readFileSync(join(serviceAccountDir, "ca.crt")).toString("base64"),
      insecureSkipTlsVerify: false,
    };
  }
  const file =
    kubeconfig ??
    (process.env["KUBECONFIG"] ?? "").split(":").find((p) => p !== "" && existsSync(p)) ??
    join(homedir(), ".kube", "config");
  const config = (parse(readFileSync(file, "utf8")) ?? {}) as KubeconfigClusters;
  const contextName = config["current-context"];
  const clusterName = config.contexts?.find((c) => c.name === contextName)?.context?.cluster;
  const cluster = config.clusters?.find((c) => c.name === clusterName)?.cluster;
  if (cluster?.server === undefined)
    throw new Error(
      `kubeconfig ${file}: the current context (${contextName ?? "none"}) names no cluster with a server`,
    );
  const caFile = cluster["certificate-authority"];
  const caData =
    cluster["certificate-authority-data"] ??
    (caFile === undefined
      ? undefined
      : readFileSync(isAbsolute(caFile) ? caFile : join(dirname(resolve(file)), caFile)).toString("base64"));
  return { server: cluster.server, caData, insecureSkipTlsVerify: cluster["insecure-skip-tls-verify"] === true };
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

/** Writes `content` so that a reader never sees half of it, readable by the owner only. */
async function writeAtomically(path: string, content: string): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, content, { mode: 0o600 });
  await rename(tmp, path);
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
