/**
 * The push webhook receiver: `POST /webhook` from GitHub, GitLab or the generic signed form.
 * Only a verified request does anything (401 otherwise); a verified push gets the matching syncs
 * an immediate fetch. Polling stays the fallback, so a lost webhook only costs latency.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { connectionLimits, connectionServerOptions, limitConnections, type ConnectionLimits } from "@driftless/metrics";
import type { Logger } from "@driftless/sync";
import { BodyIncomplete, BodyTooLarge, readBody } from "./webhook-body.ts";
import { DefaultRecentPushes, RecentPushes, type RecentPushesOptions } from "./recent-pushes.ts";
import { parseWebhook, providerOf, verify, type Push, type WebhookProvider } from "./webhook-push.ts";

export const WebhookResult = {
  Accepted: "accepted",
  Ignored: "ignored",
  Unauthorized: "unauthorized",
  Invalid: "invalid",
  Unavailable: "unavailable",
  /** The body did not arrive: cut at the read deadline, or the client left. */
  Incomplete: "incomplete",
  /** Refused unread: too many requests in flight. */
  Busy: "busy",
} as const;
export type WebhookResult = (typeof WebhookResult)[keyof typeof WebhookResult];

export interface WebhookServerOptions {
  /** 0 picks a free port. */
  readonly port: number;
  readonly host?: string;
  readonly secret: string;
  /** Triggers the syncs a push concerns; returns how many. Throws when the queue is unreachable. */
  readonly onPush: (push: Push, provider: WebhookProvider) => Promise<number>;
  /** Every request's outcome; `syncs` (how many a push triggered, never told to the sender) comes with `accepted`. */
  readonly onResult?: (provider: WebhookProvider, result: WebhookResult, syncs?: number) => void;
  readonly log: Logger;
  readonly limits?: Partial<WebhookLimits>;
  /** Idle and connection caps (the read deadline above sets the header and request timeouts). */
  readonly connectionLimits?: Partial<ConnectionLimits>;
  /** How long and how many handled pushes are remembered, so a replay queues nothing. */
  readonly recentPushes?: RecentPushesOptions;
}

/**
 * What one unauthenticated client can cost. Memory held by request bodies is at most
 * maxConcurrent × maxBodyBytes (16 MiB); a client that trickles its request is cut at the deadline.
 */
export interface WebhookLimits {
  /** Headers and body must both arrive within this (slowloris). Providers send at once and wait 10 s. */
  readonly readTimeoutMs: number;
  /** Requests handled at once; beyond it 503 at once, body unread, connection closed. */
  readonly maxConcurrent: number;
  /** Push payloads are small; a larger body is refused before it is buffered. */
  readonly maxBodyBytes: number;
}

export const DefaultWebhookLimits: WebhookLimits = {
  readTimeoutMs: 10_000,
  maxConcurrent: 16,
  maxBodyBytes: 1024 * 1024,
};

export interface WebhookServer {
  readonly port: number;
  close(): Promise<void>;
}

function reply(response: ServerResponse, status: number, body: Record<string, unknown>, close = false): void {
  const text = `${JSON.stringify(body)}\n`;
  response.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    // Node closes the socket once this is sent, so an unread body is never drained or kept.
    ...(close ? { connection: "close" } : {}),
  });
  response.end(text);
}

export async function serveWebhooks(options: WebhookServerOptions): Promise<WebhookServer> {
  const limits: WebhookLimits = { ...DefaultWebhookLimits, ...options.limits };
  const recentPushes = new RecentPushes(options.recentPushes ?? DefaultRecentPushes);
  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = new URL(request.url ?? "/", "http://localhost").pathname;
    if (path !== "/webhook" && !path.startsWith("/webhook/")) return reply(response, 404, { status: "not found" });
    if (request.method !== "POST") {
      response.setHeader("allow", "POST");
      return reply(response, 405, { status: "method not allowed" });
    }
    const provider = providerOf(request.headers);
    const done = (
      status: number,
      result: WebhookResult,
      body: Record<string, unknown>,
      { close = false, syncs }: { close?: boolean; syncs?: number } = {},
    ): void => {
      options.onResult?.(provider, result, syncs);
      reply(response, status, { status: result, ...body }, close);
    };
    let body: Buffer;
    try {
      body = await readBody(request, limits.maxBodyBytes);
    } catch (error) {
      if (error instanceof BodyTooLarge)
        return done(413, WebhookResult.Invalid, { detail: `body over ${limits.maxBodyBytes} bytes` }, { close: true });
      // Cut at the read deadline or gone: there is no one to answer.
      if (error instanceof BodyIncomplete) return options.onResult?.(provider, WebhookResult.Incomplete);
      throw error;
    }
    if (!verify(provider, request.headers, body, options.secret)) {
      options.log.warn("refused a webhook request with a missing or wrong signature", {
        provider,
        remote: request.socket.remoteAddress,
      });
      return done(401, WebhookResult.Unauthorized, {});
    }
    const parsed = parseWebhook(provider, request.headers, body);
    if (parsed.kind === "invalid") return done(400, WebhookResult.Invalid, { detail: parsed.why });
    if (parsed.kind === "ignored") return done(202, WebhookResult.Ignored, { detail: parsed.why });
    // Only a push naming its commit can be told from a later one: a generic {repo, branch} is the same every time.
    const pushKey = parsed.push.commit === undefined ? undefined : RecentPushes.keyOf(provider, body);
    if (pushKey !== undefined && recentPushes.has(pushKey))
      return done(202, WebhookResult.Ignored, { detail: "this push was already handled" });
    let matched: number;
    try {
      matched = await options.onPush(parsed.push, provider);
    } catch (error) {
      options.log.warn("could not trigger syncs for a push", { provider, error: String(error) });
      // The sender retries on 5xx; polling catches up meanwhile.
      return done(503, WebhookResult.Unavailable, { detail: "the queue is unavailable" });
    }
    // Remembered only once queued: the sender's retry after a 503 must still get through.
    if (pushKey !== undefined) recentPushes.remember(pushKey);
    options.log.info("webhook push", {
      provider,
      branch: parsed.push.branch,
      commit: parsed.push.commit,
      syncs: matched,
    });
    // The count stays in the log and metrics: in the answer it would tell anyone holding the shared secret
    // which repositories and branches every tenant syncs.
    return done(202, WebhookResult.Accepted, {}, { syncs: matched });
  };

  const dispatch = (request: IncomingMessage, response: ServerResponse): void => {
    handle(request, response).catch((error: unknown) => {
      options.log.error("webhook handler failed", { error: String(error) });
      if (!response.headersSent) reply(response, 500, { status: "error" });
      else response.destroy();
    });
  };
  let inFlight = 0;
  // Node cuts a request whose headers or body are not in by the read deadline (408, or the socket destroyed).
  const connections = connectionLimits({
    headersTimeoutMs: limits.readTimeoutMs,
    requestTimeoutMs: limits.readTimeoutMs,
    ...options.connectionLimits,
  });
  const server = createServer(connectionServerOptions(connections), (request, response) => {
    if (inFlight >= limits.maxConcurrent) {
      options.onResult?.(providerOf(request.headers), WebhookResult.Busy);
      response.setHeader("retry-after", "1");
      return reply(response, 503, { status: WebhookResult.Busy }, true);
    }
    inFlight++;
    let released = false;
    const release = (): void => {
      if (!released) inFlight--;
      released = true;
    };
    response.once("finish", release);
    response.once("close", release);
    dispatch(request, response);
  });
  limitConnections(server, connections);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)));
        server.closeAllConnections();
      }),
  };
}
