/**
 * A kubeconfig reader for the common cases — static token, token file, client certificate, basic
 * auth, the in-cluster service account — without @kubernetes/client-node. Importing client-node
 * costs about 85 MiB of resident memory (it loads every generated API), more than a reconciler
 * needs for all its work; it is loaded only for users with an exec plugin or auth provider.
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { parse } from "yaml";
import { parseServer, type Endpoint, type TlsMaterial } from "./connection.ts";

export type Headers = Readonly<Record<string, string>>;

/** Where request headers come from; refreshable ones are re-read on a schedule and after a 401. */
export interface CredentialProvider {
  readonly refreshable: boolean;
  headers(): Headers | Promise<Headers>;
  refresh(): Promise<Headers>;
}

export class StaticCredentials implements CredentialProvider {
  readonly refreshable = false;
  readonly #headers: Headers;

  constructor(headers: Headers) {
    this.#headers = headers;
  }

  headers(): Headers {
    return this.#headers;
  }

  refresh(): Promise<Headers> {
    return Promise.resolve(this.#headers);
  }
}

/** Bound service-account tokens rotate on disk (about hourly); re-read like client-go, every minute and after a 401. */
export class TokenFileCredentials implements CredentialProvider {
  readonly refreshable = true;
  readonly #file: string;
  #headers: Headers;
  #readAt: number;

  constructor(file: string) {
    this.#file = file;
    this.#headers = this.#read();
    this.#readAt = Date.now();
  }

  headers(): Headers {
    if (Date.now() - this.#readAt > 60_000) {
      this.#headers = this.#read();
      this.#readAt = Date.now();
    }
    return this.#headers;
  }

  refresh(): Promise<Headers> {
    this.#headers = this.#read();
    this.#readAt = Date.now();
    return Promise.resolve(this.#headers);
  }

  #read(): Headers {
    return { Authorization: `Bearer ${readFileSync(this.#file, "utf8").trim()}` };
  }
}

export interface NativeConnection {
  readonly endpoint: Endpoint;
  readonly tls: TlsMaterial;
  readonly credentials: CredentialProvider;
}

type Named<T> = { name?: string } & T;
interface ClusterEntry {
  server?: string;
  "certificate-authority"?: string;
  "certificate-authority-data"?: string;
  "insecure-skip-tls-verify"?: boolean;
  "tls-server-name"?: string;
  "proxy-url"?: string;
}
interface UserEntry {
  token?: string;
  tokenFile?: string;
  "client-certificate"?: string;
  "client-certificate-data"?: string;
  "client-key"?: string;
  "client-key-data"?: string;
  username?: string;
  password?: string;
  exec?: unknown;
  "auth-provider"?: unknown;
}
interface KubeconfigFile {
  "current-context"?: string;
  clusters?: Named<{ cluster?: ClusterEntry }>[];
  users?: Named<{ user?: UserEntry }>[];
  contexts?: Named<{ context?: { cluster?: string; user?: string; namespace?: string } }>[];
}

const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

/** A kubeconfig's current context, resolved: its file, cluster and user entries. */
interface CurrentContext {
  readonly file: string;
  readonly clusterName: string | undefined;
  readonly cluster: ClusterEntry & { server: string };
  readonly user: UserEntry;
  /** Reads PEM from `*-data` (base64) or a file reference relative to the kubeconfig's folder. */
  readonly readPem: (data: string | undefined, ref: string | undefined) => string | undefined;
}

function readCurrentContext(path: string | undefined): CurrentContext {
  const file = path ?? defaultKubeconfigPath();
  const config = (parse(readFileSync(file, "utf8")) ?? {}) as KubeconfigFile;
  const contextName = config["current-context"];
  const context = config.contexts?.find((c) => c.name === contextName)?.context;
  if (context === undefined)
    throw new Error(`kubeconfig ${file} has no current context (current-context: ${contextName ?? "<none>"})`);
  const cluster = config.clusters?.find((c) => c.name === context.cluster)?.cluster;
  if (cluster?.server === undefined)
    throw new Error(`kubeconfig ${file}: context ${contextName} names no cluster with a server`);
  const base = dirname(resolve(file));
  return {
    file,
    clusterName: context.cluster,
    cluster: { ...cluster, server: cluster.server },
    user: config.users?.find((u) => u.name === context.user)?.user ?? {},
    readPem: (data, ref) => {
      if (data !== undefined) return Buffer.from(data, "base64").toString("utf8");
      if (ref !== undefined) return readFileSync(isAbsolute(ref) ? ref : join(base, ref), "utf8");
      return undefined;
    },
  };
}

/**
 * The namespace the current context names, as kubectl reads it for a command without `-n` (in-cluster
 * without a path: the pod's own); undefined when it names none, or the kubeconfig cannot be read (the
 * client reports that).
 */
export function kubeconfigNamespace(path?: string): string | undefined {
  try {
    if (path === undefined && process.env["KUBERNETES_SERVICE_HOST"] !== undefined)
      return readFileSync(join(serviceAccountDir, "namespace"), "utf8").trim() || undefined;
    const file = path ?? defaultKubeconfigPath();
    const config = (parse(readFileSync(file, "utf8")) ?? {}) as KubeconfigFile;
    const contextName = config["current-context"];
    return config.contexts?.find((c) => c.name === contextName)?.context?.namespace || undefined;
  } catch {
    return undefined;
  }
}

/** Where the current context's API server is and how to trust it (no user, no credentials). */
export interface KubeconfigCluster {
  readonly server: string;
  /** PEM of the CA, or undefined for the system roots. */
  readonly caPem: string | undefined;
  readonly insecureSkipTlsVerify: boolean;
}

/**
 * The current context's cluster, by the same rules as `loadNativeConnection` (in-cluster without a
 * path when KUBERNETES_SERVICE_HOST is set). For processes that hand the address on, such as the
 * manager writing kubeconfigs for its reconcilers; it works whatever authentication the user uses.
 */
export function readKubeconfigCluster(path?: string): KubeconfigCluster {
  if (path === undefined && process.env["KUBERNETES_SERVICE_HOST"] !== undefined) {
    const { endpoint, tls } = inCluster();
    return {
      server: endpoint.server,
      caPem: typeof tls.ca === "string" ? tls.ca : undefined,
      insecureSkipTlsVerify: false,
    };
  }
  const { cluster, readPem } = readCurrentContext(path);
  return {
    server: cluster.server,
    caPem: readPem(cluster["certificate-authority-data"], cluster["certificate-authority"]),
    insecureSkipTlsVerify: cluster["insecure-skip-tls-verify"] === true,
  };
}

/**
 * The connection a kubeconfig describes, or undefined when its user needs client-node (exec
 * plugin, auth provider). Without a path: in-cluster when KUBERNETES_SERVICE_HOST is set, else
 * the first file of $KUBECONFIG, else ~/.kube/config.
 */
export function loadNativeConnection(path?: string): NativeConnection | undefined {
  if (path === undefined && process.env["KUBERNETES_SERVICE_HOST"] !== undefined) return inCluster();
  const { file, clusterName, cluster, user, readPem } = readCurrentContext(path);
  if (cluster["proxy-url"] !== undefined && cluster["proxy-url"] !== "") {
    throw new Error(`kubeconfig ${file}: cluster ${clusterName} sets proxy-url, which this client does not support`);
  }
  if (user.exec !== undefined || user["auth-provider"] !== undefined) return undefined;
  const base = dirname(resolve(file));

  const tls: { -readonly [K in keyof TlsMaterial]: TlsMaterial[K] } = {};
  const ca = readPem(cluster["certificate-authority-data"], cluster["certificate-authority"]);
  if (ca !== undefined) tls.ca = ca;
  if (cluster["insecure-skip-tls-verify"] === true) tls.rejectUnauthorized = false;
  if (cluster["tls-server-name"] !== undefined) tls.servername = cluster["tls-server-name"];
  const cert = readPem(user["client-certificate-data"], user["client-certificate"]);
  const key = readPem(user["client-key-data"], user["client-key"]);
  if (cert !== undefined) tls.cert = cert;
  if (key !== undefined) tls.key = key;

  let credentials: CredentialProvider;
  if (user.token !== undefined && user.token !== "")
    credentials = new StaticCredentials({ Authorization: `Bearer ${user.token}` });
  else if (user.tokenFile !== undefined)
    credentials = new TokenFileCredentials(isAbsolute(user.tokenFile) ? user.tokenFile : join(base, user.tokenFile));
  else if (user.username !== undefined && user.password !== undefined) {
    credentials = new StaticCredentials({
      Authorization: `Basic ${Buffer.from(`${user.username}:${user.password}`).toString("base64")}`,
    });
  } else credentials = new StaticCredentials({});
  return { endpoint: parseServer(cluster.server), tls, credentials };
}

function defaultKubeconfigPath(): string {
  const fromEnv = (process.env["KUBECONFIG"] ?? "").split(":").find((p) => p !== "" && existsSync(p));
  return fromEnv ?? join(homedir(), ".kube", "config");
}

function inCluster(): NativeConnection {
  const host = process.env["KUBERNETES_SERVICE_HOST"] ?? "";
  const port = process.env["KUBERNETES_SERVICE_PORT"] ?? "443";
  const server = `https://${host.includes(":") ? `[${host}]` : host}:${port}`;
  return {
    endpoint: parseServer(server),
    tls: { ca: readFileSync(join(serviceAccountDir, "ca.crt"), "utf8") },
    credentials: new TokenFileCredentials(join(serviceAccountDir, "token")),
  };
}
