/**
 * One HTTP exchange with the API server over the shared agent: the body in, the body out, a
 * deadline and cancellation. No Kubernetes semantics here (client.ts has them).
 */
import http from "node:http";
import https from "node:https";
import type { StreamTarget } from "./stream-socket.ts";
import type { Endpoint } from "./connection.ts";

export interface Transport {
  readonly endpoint: Endpoint;
  /** Request/response exchanges; its socket limit is the client's request concurrency. */
  readonly agent: http.Agent;
  /**
   * Streams (watches) hold a connection for minutes. On the request agent each would take a socket
   * from the request pool, so a reconciler writing at full concurrency with a watch open queued one
   * request behind the pool all the time; streams get connections of their own (stream-socket.ts).
   */
  readonly stream: StreamTarget;
}

export interface Exchange {
  readonly method: string;
  /** Path and query, without the endpoint's base path. */
  readonly path: string;
  readonly headers: http.OutgoingHttpHeaders;
  /**
   * A string body is written together with the headers in one write; a Buffer makes Node send
   * headers and body as two chunks (writev), which measured about twice the send cost per request.
   */
  readonly body?: string | Buffer;
  readonly signal?: AbortSignal;
  /** 0 for no deadline. */
  readonly timeoutMs: number;
  /**
   * For a caller that needs only the start of a successful answer (the metadata of a ResourceGroup
   * whose write answers with megabytes): called with the body so far, up to {@link prefixScanBytes};
   * once it returns true the rest is read and dropped instead of kept. Error answers are kept whole.
   */
  readonly prefixSuffices?: (prefix: Buffer) => boolean;
}

/** How much of a body {@link Exchange.prefixSuffices} is shown before the whole body is kept. */
export const prefixScanBytes = 64 * 1024;

export interface RawResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
}

export class RequestTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`no response within ${timeoutMs} ms`);
    this.name = "RequestTimeoutError";
  }
}

/** Sends a request and reads the whole response body. */
export async function exchange(transport: Transport, ex: Exchange): Promise<RawResponse> {
  try {
    return await exchangeOnce(transport, ex);
  } catch (error) {
    // A keep-alive socket the server closed while idle fails the first write with a reset before
    // any response. The server closed it without reading the request, so sending it again on a
    // fresh socket is safe, once (the pattern Node's http docs give for `reusedSocket`).
    if (error instanceof StaleSocketError) return exchangeOnce(transport, ex);
    throw error;
  }
}

class StaleSocketError extends Error {}

function isReset(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === "ECONNRESET" || code === "EPIPE";
}

function start(transport: Transport, ex: Exchange, agent: http.Agent): http.ClientRequest {
  const { endpoint } = transport;
  const options: http.RequestOptions = {
    agent,
    hostname: endpoint.hostname,
    port: endpoint.port,
    method: ex.method,
    path: endpoint.basePath + ex.path,
    headers: ex.headers,
  };
  return endpoint.secure ? https.request(options) : http.request(options);
}

function exchangeOnce(transport: Transport, ex: Exchange): Promise<RawResponse> {
  return new Promise<RawResponse>((resolve, reject) => {
    const signal = ex.signal;
    if (signal?.aborted === true) {
      reject(signal.reason);
      return;
    }
    const req = start(transport, ex, transport.agent);
    let settled = false;
    let responded = false;
    // Why we cut the exchange ourselves, so that it wins over the socket errors that follow.
    let cutBy: unknown;
    const cut = (why: unknown): void => {
      cutBy ??= why;
      req.destroy(why instanceof Error ? why : new Error("aborted"));
    };
    const onAbort = (): void => cut(signal?.reason);
    const timer =
      ex.timeoutMs > 0 ? setTimeout(() => cut(new RequestTimeoutError(ex.timeoutMs)), ex.timeoutMs) : undefined;
    const finish = (): void => {
      settled = true;
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    const fail = (error: unknown): void => {
      if (settled) return;
      finish();
      if (cutBy !== undefined) reject(cutBy);
      else if (!responded && req.reusedSocket && isReset(error))
        reject(new StaleSocketError("stale keep-alive socket", { cause: error }));
      else reject(error);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    req.on("error", fail);
    req.on("response", (res) => {
      responded = true;
      const chunks: Buffer[] = [];
      const keep = bodyKeeper(chunks, (res.statusCode ?? 0) < 300 ? ex.prefixSuffices : undefined);
      res.on("data", keep);
      res.on("error", fail);
      res.on("end", () => {
        if (settled) return;
        finish();
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks),
        });
      });
      res.on("close", () => {
        if (!res.complete) fail(new Error("the connection closed before the response was complete"));
      });
    });
    req.end(ex.body);
  });
}

/**
 * The response's data handler: every chunk goes into `chunks`, unless `suffices` says the body so
 * far is enough; from then on chunks are dropped as they arrive (the response is still read to its
 * end, so the connection stays usable).
 */
function bodyKeeper(chunks: Buffer[], suffices: ((prefix: Buffer) => boolean) | undefined): (chunk: Buffer) => void {
  let received = 0;
  let enough = false;
  return (chunk) => {
    if (enough) return;
    chunks.push(chunk);
    received += chunk.length;
    if (suffices === undefined) return;
    const body = chunks.length === 1 ? chunk : Buffer.concat(chunks);
    chunks.length = 0;
    chunks.push(body);
    if (suffices(body.subarray(0, prefixScanBytes))) {
      enough = true;
      // A copy, so that a large first chunk is not kept alive by a view of its start.
      if (body.length > prefixScanBytes) chunks[0] = Buffer.from(body.subarray(0, prefixScanBytes));
    } else if (received >= prefixScanBytes) {
      suffices = undefined; // not in the prefix: keep the whole body for the caller to read
    }
  };
}
