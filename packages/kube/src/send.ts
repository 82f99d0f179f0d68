/**
 * Sending one request over the client's connections: its headers and credentials, the fence before
 * a write, the count by verb, the server's warnings, and the retries that are always safe.
 */
import type http from "node:http";
import { clientDefaults, type KubeClientOptions } from "./client-options.ts";
import { networkError, retryAfterMs, type Subject } from "./decode-response.ts";
import type { CredentialProvider, Headers } from "./kubeconfig.ts";
import { VerbCounter, type RequestVerb } from "./request-counter.ts";
import { exchange, type RawResponse, type Transport } from "./transport.ts";

const maxRetryAfterMs = 30_000;

/** How long, and until what, a request waits for its credentials. */
export interface CredentialWait {
  readonly timeoutMs: number;
  /** Ends the wait: the request's own signal. */
  readonly signal: AbortSignal;
  /** The caller's signal: its abort reason is the request's outcome. */
  readonly callerSignal?: AbortSignal;
}

export interface SendOptions {
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
  readonly accept?: string;
  readonly prefixSuffices?: (prefix: Buffer) => boolean;
}

/** The connections, credentials and settings every request of one KubeClient goes out with. */
export class Sender {
  readonly transport: Transport;
  readonly credentials: CredentialProvider;
  readonly counter: VerbCounter;
  readonly baseHeaders: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly #retryAfterAttempts: number;
  readonly #onWarning: ((warning: string, operation: string) => void) | undefined;
  readonly #fence: ((operation: string) => void) | undefined;
  /** One controller per request in flight, for refuse() to cut (none on a long-lived signal: they would pile up). */
  readonly #inFlight = new Set<AbortController>();
  #refusedBy: Error | undefined;

  constructor(transport: Transport, credentials: CredentialProvider, options: KubeClientOptions) {
    this.transport = transport;
    this.credentials = credentials;
    this.counter = new VerbCounter();
    this.baseHeaders = { "User-Agent": options.userAgent ?? clientDefaults.userAgent };
    this.timeoutMs = options.timeoutMs ?? clientDefaults.timeoutMs;
    this.#retryAfterAttempts = options.retryAfterAttempts ?? clientDefaults.retryAfterAttempts;
    this.#onWarning = options.onWarning;
    this.#fence = options.fence;
  }

  /**
   * Sends one request, with the two retries that are always safe: again after a 401 once
   * refreshable credentials were re-read, and again when the server says when (Retry-After on
   * 429/5xx means it did not process the request).
   */
  async send(
    verb: RequestVerb,
    method: string,
    path: string,
    body: string | Buffer | undefined,
    contentType: string | undefined,
    req: SendOptions,
    subject: Subject,
  ): Promise<RawResponse> {
    // Its own controller, aborted by the caller's signal or by refuse().
    const cut = new AbortController();
    const onCallerAbort = (): void => cut.abort(req.signal?.reason);
    if (req.signal?.aborted === true) cut.abort(req.signal.reason);
    else req.signal?.addEventListener("abort", onCallerAbort, { once: true });
    this.#inFlight.add(cut);
    try {
      return await this.#send(verb, method, path, body, contentType, req, subject, cut.signal);
    } finally {
      this.#inFlight.delete(cut);
      req.signal?.removeEventListener("abort", onCallerAbort);
    }
  }

  /** Why requests are refused (refuse()), or undefined. */
  get refusal(): Error | undefined {
    return this.#refusedBy;
  }

  /** Fails every request in flight at once, and every later one before it is sent. */
  refuse(reason: Error): void {
    this.#refusedBy ??= reason;
    for (const cut of this.#inFlight) cut.abort(reason);
  }

  async #send(
    verb: RequestVerb,
    method: string,
    path: string,
    body: string | Buffer | undefined,
    contentType: string | undefined,
    req: SendOptions,
    subject: Subject,
    signal: AbortSignal,
  ): Promise<RawResponse> {
    let refreshed = false;
    for (let attempt = 0; ; attempt++) {
      const headers: http.OutgoingHttpHeaders = {
        ...this.baseHeaders,
        ...(await this.credentialHeaders(this.credentials.headers(), this.#waitOptions(req, signal), subject)),
        Accept: req.accept ?? "application/json",
      };
      if (body !== undefined) {
        headers["Content-Type"] = contentType ?? "application/json";
        headers["Content-Length"] = typeof body === "string" ? Buffer.byteLength(body) : body.length;
      }
      if (this.#refusedBy !== undefined) throw networkError(this.#refusedBy, subject);
      // After the awaits above, so that nothing stands between the check and the send.
      if (this.#fence !== undefined && method !== "GET" && method !== "HEAD") this.#fence(subject.operation);
      this.counter.started(verb);
      const started = performance.now();
      let raw: RawResponse;
      try {
        raw = await exchange(this.transport, {
          method,
          path,
          headers,
          ...(body === undefined ? {} : { body }),
          signal,
          timeoutMs: req.timeoutMs ?? this.timeoutMs,
          ...(req.prefixSuffices === undefined ? {} : { prefixSuffices: req.prefixSuffices }),
        });
      } catch (error) {
        this.counter.finished(verb, 0, performance.now() - started, path);
        if (req.signal?.aborted === true) throw req.signal.reason;
        // Cut by refuse(): its reason, not the socket error the cut caused.
        throw networkError(signal.aborted && this.#refusedBy !== undefined ? this.#refusedBy : error, subject);
      }
      this.counter.finished(verb, raw.status, performance.now() - started, path);
      this.#reportWarnings(raw.headers, subject.operation);
      if (raw.status === 401 && !refreshed && this.credentials.refreshable) {
        refreshed = true;
        await this.credentialHeaders(this.credentials.refresh(), this.#waitOptions(req, signal), subject);
        continue;
      }
      const retryAfter = retryAfterMs(raw);
      if (retryAfter !== undefined && (raw.status === 429 || raw.status >= 500) && attempt < this.#retryAfterAttempts) {
        await sleep(Math.min(retryAfter, maxRetryAfterMs), signal).catch((error: unknown) => {
          throw req.signal?.aborted === true ? req.signal.reason : networkError(error, subject);
        });
        continue;
      }
      return raw;
    }
  }

  #waitOptions(req: SendOptions, signal: AbortSignal): CredentialWait {
    return {
      timeoutMs: req.timeoutMs ?? this.timeoutMs,
      signal,
      ...(req.signal === undefined ? {} : { callerSignal: req.signal }),
    };
  }

  /**
   * The credentials' headers as a request waits for them. Reading them may run the kubeconfig's plugin (exec,
   * auth provider), which has no deadline of its own: the wait ends with the request's timeout, its signal
   * (its caller's abort or a refusal), and a plugin that fails is a retryable network error naming them.
   */
  async credentialHeaders(
    pending: Headers | Promise<Headers>,
    wait: CredentialWait,
    subject: Subject,
  ): Promise<Headers> {
    if (!(pending instanceof Promise)) return pending;
    const { timeoutMs, signal } = wait;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const cut = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () =>
          reject(new Error(`the kubeconfig's credentials were not read within ${timeoutMs} ms (credential plugin)`)),
        timeoutMs,
      );
      onAbort = () => reject(signal.reason);
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      return await Promise.race([pending, cut]);
    } catch (error) {
      if (wait.callerSignal?.aborted === true) throw wait.callerSignal.reason;
      if (signal.aborted && this.#refusedBy !== undefined) throw networkError(this.#refusedBy, subject);
      const why = error instanceof Error ? error.message : String(error);
      throw networkError(new Error(`reading the kubeconfig's credentials failed: ${why}`), subject);
    } finally {
      clearTimeout(timer);
      if (onAbort !== undefined) signal.removeEventListener("abort", onAbort);
    }
  }

  #reportWarnings(headers: http.IncomingHttpHeaders, operation: string): void {
    const warning = headers["warning"];
    if (warning === undefined || this.#onWarning === undefined) return;
    // RFC 7234 warnings: `299 - "message"`; the server sends one header per warning.
    for (const value of Array.isArray(warning) ? warning : [warning]) {
      const match = /^\d{3} \S+ "((?:[^"\\]|\\.)*)"/.exec(value);
      this.#onWarning(match?.[1] !== undefined ? match[1].replace(/\\(.)/g, "$1") : value, operation);
    }
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
