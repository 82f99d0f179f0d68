/**
 * Where the API server is and how to authenticate, taken from a kubeconfig through
 * @kubernetes/client-node (which knows every auth flavour: tokens, client certs, token files,
 * exec plugins, OIDC). We use it only for that; requests go over our own agent.
 */
import type { RequestOptions } from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";
import type { CredentialProvider } from "./kubeconfig.ts";

/** client-node is loaded only when a kubeconfig needs it (exec plugins, auth providers): it costs ~85 MiB. */
async function clientNode(): Promise<typeof import("@kubernetes/client-node")> {
  return import("@kubernetes/client-node");
}

/** TLS material for the agent, copied out of client-node's request options. */
export interface TlsMaterial {
  readonly ca?: RequestOptions["ca"];
  readonly cert?: RequestOptions["cert"];
  readonly key?: RequestOptions["key"];
  readonly pfx?: RequestOptions["pfx"];
  readonly passphrase?: string;
  readonly rejectUnauthorized?: boolean;
  readonly servername?: string;
}

export interface Endpoint {
  /** The server URL as configured. */
  readonly server: string;
  readonly secure: boolean;
  readonly hostname: string;
  readonly port: number;
  /** A path prefix some proxies put in front of the API ("" usually). */
  readonly basePath: string;
}

export function parseServer(server: string): Endpoint {
  const url = new URL(server);
  const secure = url.protocol === "https:";
  if (!secure && url.protocol !== "http:")
    throw new TypeError(`unsupported API server URL ${server}: only https and http`);
  return {
    server,
    secure,
    // URL keeps IPv6 literals bracketed; node:https wants them bare.
    hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: url.port === "" ? (secure ? 443 : 80) : Number(url.port),
    basePath: url.pathname.replace(/\/+$/, ""),
  };
}

/** Loads a kubeconfig: a file, else in-cluster when KUBERNETES_SERVICE_HOST is set, else the default rules. */
export async function loadKubeConfig(path?: string): Promise<KubeConfig> {
  const { KubeConfig } = await clientNode();
  const kc = new KubeConfig();
  if (path !== undefined) kc.loadFromFile(path);
  else if (process.env["KUBERNETES_SERVICE_HOST"] !== undefined) kc.loadFromCluster();
  else kc.loadFromDefault();
  return kc;
}

/** How often credentials that can change (token files, exec plugins, OIDC) are re-read; client-go uses 60 s. */
const dynamicCredentialTtlMs = 60_000;

/**
 * Authorization headers, cached. Static tokens and basic auth never change; token files and
 * plugins are re-read every minute, and at once after a 401.
 */
export class Credentials implements CredentialProvider {
  readonly #kc: KubeConfig;
  readonly #dynamic: boolean;
  #headers: Readonly<Record<string, string>>;
  #expiresAt: number;
  #refreshing: Promise<Readonly<Record<string, string>>> | undefined;

  constructor(kc: KubeConfig, initial: Readonly<Record<string, string>>) {
    const user = kc.getCurrentUser();
    this.#kc = kc;
    this.#dynamic = user !== null && (user.exec !== undefined || user.authProvider !== undefined);
    this.#headers = initial;
    this.#expiresAt = this.#dynamic ? Date.now() + dynamicCredentialTtlMs : Number.POSITIVE_INFINITY;
  }

  /** True when a 401 may be cured by reading the credentials again. */
  get refreshable(): boolean {
    return this.#dynamic;
  }

  headers(): Readonly<Record<string, string>> | Promise<Readonly<Record<string, string>>> {
    if (Date.now() < this.#expiresAt) return this.#headers;
    return this.refresh();
  }

  refresh(): Promise<Readonly<Record<string, string>>> {
    // One refresh at a time: an exec plugin must not run once per in-flight request.
    this.#refreshing ??= authHeaders(this.#kc)
      .then(({ headers }) => {
        this.#headers = headers;
        this.#expiresAt = Date.now() + dynamicCredentialTtlMs;
        return headers;
      })
      .finally(() => {
        this.#refreshing = undefined;
      });
    return this.#refreshing;
  }
}

/** Applies the kubeconfig to empty request options and keeps the headers and TLS material. */
export async function authHeaders(
  kc: KubeConfig,
): Promise<{ headers: Readonly<Record<string, string>>; tls: TlsMaterial }> {
  const options: RequestOptions = {};
  await kc.applyToHTTPSOptions(options);
  // client-node also builds an agent of its own here; we never use it.
  delete options.agent;
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(options.headers ?? {})) {
    if (value !== undefined) headers[key] = Array.isArray(value) ? value.join(", ") : String(value);
  }
  if (options.auth !== undefined && options.auth !== null) {
    headers["Authorization"] = `Basic ${Buffer.from(options.auth).toString("base64")}`;
  }
  const tls: { -readonly [K in keyof TlsMaterial]: TlsMaterial[K] } = {};
  if (options.ca !== undefined) tls.ca = options.ca;
  if (options.cert !== undefined) tls.cert = options.cert;
  if (options.key !== undefined) tls.key = options.key;
  if (options.pfx !== undefined) tls.pfx = options.pfx;
  if (options.passphrase !== undefined) tls.passphrase = options.passphrase;
  if (options.rejectUnauthorized !== undefined) tls.rejectUnauthorized = options.rejectUnauthorized;
  if (options.servername !== undefined) tls.servername = options.servername;
  return { headers, tls };
}

/** The current cluster's endpoint, TLS material and credentials. */
export async function connect(
  kc: KubeConfig,
): Promise<{ endpoint: Endpoint; tls: TlsMaterial; credentials: Credentials }> {
  const cluster = kc.getCurrentCluster();
  if (cluster === null)
    throw new Error(`kubeconfig has no current cluster (context ${kc.getCurrentContext() || "<none>"})`);
  if (cluster.proxyUrl !== undefined && cluster.proxyUrl !== "") {
    throw new Error(`kubeconfig cluster ${cluster.name} sets proxy-url, which this client does not support`);
  }
  const endpoint = parseServer(cluster.server);
  const authKc = endpoint.secure ? kc : await plainHttpView(kc, cluster.name);
  const { headers, tls } = await authHeaders(authKc);
  return { endpoint, tls, credentials: new Credentials(authKc, headers) };
}

/**
 * client-node refuses to compute options for an http:// server unless skipTLSVerify is set (it
 * builds a TLS agent as a side effect). There is no TLS to verify on plain HTTP (kubectl proxy,
 * in-cluster port 80), so headers are computed from a copy that says so.
 */
async function plainHttpView(kc: KubeConfig, clusterName: string): Promise<KubeConfig> {
  const { KubeConfig } = await clientNode();
  const view = new KubeConfig();
  view.loadFromOptions({
    clusters: kc.clusters.map((c) => (c.name === clusterName ? { ...c, skipTLSVerify: true } : c)),
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.currentContext,
  });
  return view;
}
