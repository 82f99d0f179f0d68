/**
 * One HTTP(S) request with what a registry client needs and `fetch` does not give: a CA bundle of the
 * sync's own (caCertSecretRef), a cap on the body size, and redirects that drop the Authorization
 * header when they leave the registry's host (blob storage behind a redirect must not see it).
 */
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";

export interface HttpRequest {
  readonly method?: "GET" | "HEAD";
  readonly headers?: Readonly<Record<string, string>>;
  /** PEM bundle trusted in addition to nothing else: when set, it replaces the system roots. */
  readonly ca?: string | undefined;
  readonly maxBytes: number;
  readonly signal?: AbortSignal | undefined;
  readonly timeoutMs?: number;
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** The URL that answered, after redirects. */
  readonly url: string;
}

/** The body was larger than the caller allows. */
export class BodyTooLargeError extends Error {
  constructor(url: string, maxBytes: number) {
    super(`the response from ${new URL(url).host} is larger than ${maxBytes} bytes`);
  }
}

const maxRedirects = 5;

export async function send(url: string, options: HttpRequest): Promise<HttpResponse> {
  let current = url;
  let headers = { ...options.headers };
  for (let hop = 0; ; hop++) {
    const response = await once(current, headers, options);
    const location = response.headers.location;
    if (response.status < 300 || response.status >= 400 || location === undefined || hop === maxRedirects)
      return response;
    const next = new URL(location, current);
    headers = redirectHeaders(headers, current, next);
    current = next.toString();
  }
}

/**
 * The headers a redirect from `from` to `to` carries: no Authorization once it leaves the origin (another
 * host, or https to http on the same host name, where it would cross the network in clear text).
 */
export function redirectHeaders(
  headers: Readonly<Record<string, string>>,
  from: string,
  to: URL,
): Record<string, string> {
  if (to.origin === new URL(from).origin) return { ...headers };
  const { authorization: _dropped, ...rest } = headers;
  return rest;
}

function once(url: string, headers: Record<string, string>, options: HttpRequest): Promise<HttpResponse> {
  const target = new URL(url);
  const request = target.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      target,
      {
        method: options.method ?? "GET",
        headers,
        ...(options.ca === undefined ? {} : { ca: options.ca }),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        timeout: options.timeoutMs ?? 60_000,
      },
      (res) => {
        const declared = Number(res.headers["content-length"] ?? "0");
        if (declared > options.maxBytes) {
          res.destroy();
          reject(new BodyTooLargeError(url, options.maxBytes));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > options.maxBytes) {
            res.destroy();
            reject(new BodyTooLargeError(url, options.maxBytes));
            return;
          }
          chunks.push(chunk);
        });
        res.on("error", reject);
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), url }),
        );
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer from ${target.host} within the timeout`)));
    req.on("error", reject);
    req.end();
  });
}
