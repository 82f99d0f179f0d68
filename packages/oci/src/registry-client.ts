/**
 * The read side of the OCI distribution API for one repository: manifests and blobs, behind the two
 * ways a registry asks for credentials (a Basic challenge, or a Bearer challenge answered by its
 * token endpoint with the same basic credentials). HTTPS, and plain HTTP only for the local and private
 * registry names go-containerregistry allows it for (registry-scheme.ts).
 */
import { createHash } from "node:crypto";
import { BodyTooLargeError, send, type HttpResponse } from "./http.ts";
import { OciFailureReason, OciFetchError } from "./errors.ts";
import { registryHost, type ImageReference } from "./reference.ts";
import { allowsPlainHttp, firstAnsweringScheme, type RegistryScheme } from "./registry-scheme.ts";

export interface RegistryCredentials {
  readonly username: string;
  readonly password: string;
}

export interface RegistryClientOptions {
  readonly credentials?: RegistryCredentials | undefined;
  /** PEM bundle from caCertSecretRef (key `cert`). */
  readonly ca?: string | undefined;
  readonly signal?: AbortSignal | undefined;
}

interface Challenge {
  readonly scheme: string;
  readonly params: Readonly<Record<string, string>>;
}

/** `Bearer realm="https://r/token",service="r",scope="repository:x:pull"` into its scheme and parameters. */
export function parseChallenge(header: string): Challenge {
  const space = header.indexOf(" ");
  const scheme = (space < 0 ? header : header.slice(0, space)).toLowerCase();
  const params: Record<string, string> = {};
  for (const m of header.slice(space + 1).matchAll(/([a-zA-Z_]+)="([^"]*)"/g)) params[m[1]!.toLowerCase()] = m[2]!;
  return { scheme, params };
}

const tlsCodes = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_HAS_EXPIRED",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);
/** Chains no trusted CA signs: Config Sync (Go's TLS) says `unknownAuthority`, which users search for. */
const unknownAuthority = "tls: failed to verify certificate: x509: certificate signed by unknown authority";
const unknownAuthorityCodes = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
]);

export class RegistryClient {
  readonly #ref: ImageReference;
  readonly #options: RegistryClientOptions;
  #scheme: Promise<RegistryScheme> | undefined;
  #authorization: string | undefined;

  constructor(ref: ImageReference, options: RegistryClientOptions) {
    this.#ref = ref;
    this.#options = options;
  }

  /** GET `/v2/<repository>/<path>`, answering an auth challenge once; `what` names it in errors ("tag v1"). */
  async get(path: string, what: string, accept: readonly string[], maxBytes: number): Promise<HttpResponse> {
    this.#scheme ??= this.#pickScheme();
    const url = `${await this.#scheme}://${registryHost(this.#ref)}/v2/${this.#ref.repository}/${path}`;
    let response = await this.#send(url, accept, maxBytes);
    if (response.status === 401) {
      await this.#answer(response);
      response = await this.#send(url, accept, maxBytes);
      if (response.status === 401) throw this.#rejected(response);
    }
    if (response.status === 403) throw this.#rejected(response);
    if (response.status === 404)
      throw new OciFetchError(
        OciFailureReason.NotFound,
        `${this.#image()}: ${what} not found (${registryError(response)})`,
      );
    if (transientStatus(response.status))
      throw new OciFetchError(
        OciFailureReason.Unavailable,
        `${this.#image()}: the registry answered ${response.status}`,
      );
    if (response.status !== 200)
      throw new OciFetchError(
        OciFailureReason.InvalidImage,
        `${this.#image()}: the registry answered ${response.status} (${registryError(response)})`,
      );
    return response;
  }

  /**
   * HTTPS, asked nothing first, for every registry but those go-containerregistry's name rule allows plain
   * HTTP for; those are pinged at /v2/ (no credentials) over https and http, and the first to answer wins.
   */
  async #pickScheme(): Promise<RegistryScheme> {
    if (!allowsPlainHttp(this.#ref.registry)) return "https";
    try {
      return await firstAnsweringScheme((scheme, signal) => this.#ping(scheme, signal), this.#options.signal);
    } catch (error) {
      throw this.#pingError(error);
    }
  }

  /** Answers when `/v2/` does as a registry does: 200, or 401 with a challenge (transport.Ping's rule). */
  async #ping(scheme: RegistryScheme, signal: AbortSignal): Promise<void> {
    const url = `${scheme}://${registryHost(this.#ref)}/v2/`;
    const response = await send(url, { ca: this.#options.ca, maxBytes: 64 * 1024, signal });
    if (response.status !== 200 && response.status !== 401) throw new Error(`GET ${url} answered ${response.status}`);
  }

  /** Both pings failed: the https failure leads (a TLS hint stays first), the http one follows. */
  #pingError(error: unknown): unknown {
    if (!(error instanceof AggregateError)) return error;
    const [overHttps, overHttp] = error.errors as [unknown, unknown];
    const first = this.#networkError(overHttps);
    return new OciFetchError(first.reason, `${first.message}; over http: ${messageOf(overHttp)}`, error);
  }

  #image(): string {
    return `${this.#ref.registry}/${this.#ref.repository}`;
  }

  /**
   * `answer`, the refusal: its error code and message (`UNAUTHORIZED: authentication required`) close ours, as they
   * lead go-containerregistry's in Config Sync's source error.
   */
  #rejected(answer?: HttpResponse): OciFetchError {
    const said = answer === undefined ? "" : ` (${registryError(answer)})`;
    return new OciFetchError(
      OciFailureReason.AuthRejected,
      this.#options.credentials === undefined
        ? `${this.#image()}: the registry requires credentials; set spec.oci.auth "token" and a secretRef with username and password${said}`
        : `${this.#image()}: the registry rejected the credentials from spec.oci.secretRef (wrong username or password?)${said}`,
    );
  }

  async #send(url: string, accept: readonly string[], maxBytes: number): Promise<HttpResponse> {
    const headers: Record<string, string> = { accept: accept.join(", ") };
    if (this.#authorization !== undefined) headers["authorization"] = this.#authorization;
    try {
      return await send(url, { headers, ca: this.#options.ca, maxBytes, signal: this.#options.signal });
    } catch (error) {
      throw this.#networkError(error);
    }
  }

  #networkError(error: unknown): OciFetchError {
    if (error instanceof OciFetchError) return error;
    if (error instanceof BodyTooLargeError)
      return new OciFetchError(OciFailureReason.UnsafeLayer, `${this.#image()}: ${error.message}`);
    const code = (error as NodeJS.ErrnoException).code ?? "";
    if (tlsCodes.has(code)) {
      const goWords = unknownAuthorityCodes.has(code) ? `${unknownAuthority}: ` : "";
      return new OciFetchError(
        OciFailureReason.AuthRejected,
        `${this.#image()}: ${goWords}the registry's TLS certificate is not trusted (${code}); put its CA in the Secret named by spec.oci.caCertSecretRef (key cert)`,
        error,
      );
    }
    return new OciFetchError(OciFailureReason.Unavailable, `${this.#image()}: ${messageOf(error)}`, error);
  }

  /** Sets the Authorization header a challenge asks for. */
  async #answer(response: HttpResponse): Promise<void> {
    const header = response.headers["www-authenticate"];
    const challenge = parseChallenge(Array.isArray(header) ? (header[0] ?? "") : (header ?? ""));
    const credentials = this.#options.credentials;
    const basic =
      credentials === undefined
        ? undefined
        : `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString("base64")}`;
    if (challenge.scheme === "basic") {
      if (basic === undefined) throw this.#rejected(response);
      this.#authorization = basic;
      return;
    }
    if (challenge.scheme !== "bearer" || challenge.params["realm"] === undefined) throw this.#rejected(response);
    const token = tokenEndpoint(challenge.params["realm"], basic !== undefined, this.#image(), this.#ref.registry);
    if (challenge.params["service"] !== undefined) token.searchParams.set("service", challenge.params["service"]);
    token.searchParams.set("scope", challenge.params["scope"] ?? `repository:${this.#ref.repository}:pull`);
    let answer: HttpResponse;
    try {
      answer = await send(token.toString(), {
        headers: basic === undefined ? {} : { authorization: basic },
        ca: this.#options.ca,
        maxBytes: 1024 * 1024,
        signal: this.#options.signal,
      });
    } catch (error) {
      throw this.#networkError(error);
    }
    if (answer.status === 401 || answer.status === 403) throw this.#rejected(answer);
    if (answer.status !== 200)
      throw new OciFetchError(
        OciFailureReason.Unavailable,
        `${this.#image()}: the token endpoint answered ${answer.status}`,
      );
    const body = parseTokenAnswer(answer, this.#image());
    const value = typeof body.token === "string" ? body.token : body.access_token;
    if (typeof value !== "string" || value === "") throw this.#rejected();
    this.#authorization = `Bearer ${value}`;
  }
}

/**
 * The token service a Bearer challenge names. Credentials go only to one over HTTPS, or over http to the
 * registry's own host (any port) when the plain-HTTP name rule allows that registry: any other http:// realm,
 * one named to look local (`127.0.0.1.evil.example`) included, would receive the password in clear text
 * (go-containerregistry would send it; driftless does not).
 */
export function tokenEndpoint(realm: string, withCredentials: boolean, image: string, registry: string): URL {
  let url: URL;
  try {
    url = new URL(realm);
  } catch {
    throw new OciFetchError(
      OciFailureReason.InvalidImage,
      `${image}: the registry's token realm ${realm} is not a URL`,
    );
  }
  const ownPlainHost = url.protocol === "http:" && allowsPlainHttp(registry) && url.hostname === hostnameOf(registry);
  if (withCredentials && url.protocol !== "https:" && !ownPlainHost)
    throw new OciFetchError(
      OciFailureReason.AuthRejected,
      `${image}: refusing to send credentials to the token service ${url.origin}, which is not HTTPS nor a local or private registry`,
    );
  return url;
}

function hostnameOf(registry: string): string | undefined {
  try {
    return new URL(`http://${registry}`).hostname;
  } catch {
    return undefined;
  }
}

/** The token service's answer: `{"token": ...}` or `{"access_token": ...}`; anything else is the registry's fault. */
function parseTokenAnswer(answer: HttpResponse, image: string): { token?: unknown; access_token?: unknown } {
  try {
    const body = JSON.parse(answer.body.toString("utf8")) as unknown;
    if (typeof body === "object" && body !== null) return body as { token?: unknown; access_token?: unknown };
  } catch {
    // reported below
  }
  throw new OciFetchError(OciFailureReason.Unavailable, `${image}: the token service did not answer with JSON`);
}

/** The registry's own error code and message (`{"errors":[{"code":"MANIFEST_UNKNOWN",...}]}`), if any. */
function registryError(response: HttpResponse): string {
  try {
    const body = JSON.parse(response.body.toString("utf8")) as { errors?: { code?: string; message?: string }[] };
    const first = body.errors?.[0];
    if (first !== undefined) return `${first.code ?? ""}: ${first.message ?? ""}`;
  } catch {
    // Not JSON: the status says enough.
  }
  return `HTTP ${response.status}`;
}

/** What go-containerregistry retries (408, 429, 499, 5xx) passes by itself; a status 0 is no answer at all. */
function transientStatus(status: number): boolean {
  return status === 0 || status === 408 || status === 429 || status === 499 || status >= 500;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function sha256(data: Buffer): string {
  return `sha256:${createHash("sha256").update(data).digest("hex")}`;
}
