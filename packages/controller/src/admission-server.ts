/**
 * The admission webhook's HTTPS endpoint: `POST /admission-webhook` with an `admission.k8s.io/v1`
 * AdmissionReview, answered with the decision of admission-review.ts. Only the API server holds the CA,
 * but any pod can reach the port, and a review the endpoint has no room for fails open (failurePolicy
 * Ignore). The API server sends its review at once and waits 3 s, so deadlines are short and room goes to
 * whoever makes progress: bodies are capped in size, in JSON tokens, in time and in bytes received at once,
 * requests in number (admission-capacity.ts), and connections in number and time, the one idle longest
 * closed for a new one.
 */
import { createServer, type Server } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { connectionLimits, connectionServerOptions, limitConnections, type ConnectionLimits } from "@driftless/metrics";
import type { Logger } from "@driftless/sync";
import {
  AdmissionCapacity,
  ConnectionRoster,
  DefaultAdmissionLimits,
  type AdmissionLimits,
  type AdmissionTicket,
} from "./admission-capacity.ts";
import {
  namespaceToRecheck,
  reviewAdmission,
  settleInCluster,
  type AdmissionDecision,
  type AdmissionLookups,
  type AdmissionRequest,
} from "./admission-review.ts";
import { jsonTokensExceed } from "./json-tokens.ts";
import { BodyIncomplete, BodyTooLarge, readBody } from "./webhook-body.ts";

export const AdmissionWebhookPath = "/admission-webhook";

/** A body must have arrived this long after its headers; the API server sends it with them (answered 408). */
export const BodyDeadlineMs = 2_000;

/**
 * Everything the API server sends comes at once, and it gives up after 3 s: a connection gets 2 s for its
 * handshake and then its first request's first byte, 2 s for the headers, and stays 3 s idle between requests.
 */
export const AdmissionConnectionLimits: Partial<ConnectionLimits> = {
  idleMs: 2_000,
  headersTimeoutMs: 2_000,
  requestTimeoutMs: 5_000,
  keepAliveTimeoutMs: 3_000,
};

export interface AdmissionServerOptions {
  readonly port: number;
  readonly host?: string;
  readonly tls: { readonly cert: string; readonly key: string };
  readonly lookups: AdmissionLookups;
  readonly log: Logger;
  readonly limits?: Partial<AdmissionLimits>;
  readonly connectionLimits?: Partial<ConnectionLimits>;
}

export interface AdmissionServer {
  readonly port: number;
  /** Serves a renewed certificate to new connections. */
  setCertificate(tls: { readonly cert: string; readonly key: string }): void;
  close(): Promise<void>;
}

function reply(response: ServerResponse, status: number, body: unknown, close = false): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    // Node closes the socket once this is sent, so an unread body is never drained.
    ...(close ? { connection: "close" } : {}),
  });
  response.end(text);
}

/** A review read and decided; holds none of the objects, so they can be freed while the cluster is asked. */
type Reviewed =
  | { readonly kind: "invalid"; readonly status: 400 | 413; readonly why: string }
  | {
      readonly kind: "decided";
      readonly uid: string;
      readonly apiVersion: string;
      readonly decision: AdmissionDecision;
      readonly recheck: string | undefined;
      readonly who: Record<string, unknown>;
    };

function review(body: Buffer, maxJsonTokens: number): Reviewed {
  if (jsonTokensExceed(body, maxJsonTokens))
    return { kind: "invalid", status: 413, why: `more than ${maxJsonTokens} JSON tokens` };
  let parsed: { apiVersion?: string; request?: AdmissionRequest };
  try {
    parsed = JSON.parse(body.toString("utf8")) as typeof parsed;
  } catch {
    return { kind: "invalid", status: 400, why: "not JSON" };
  }
  const admission = parsed.request;
  if (admission === undefined || typeof admission.uid !== "string")
    return { kind: "invalid", status: 400, why: "not an AdmissionReview request" };
  const decision = reviewAdmission(admission);
  return {
    kind: "decided",
    uid: admission.uid,
    apiVersion: parsed.apiVersion ?? "admission.k8s.io/v1",
    decision,
    recheck: namespaceToRecheck(admission, decision),
    who: { user: admission.userInfo?.username, operation: admission.operation, kind: admission.kind?.kind },
  };
}

function announcedLength(request: IncomingMessage): number | undefined {
  const header = request.headers["content-length"];
  return header === undefined ? undefined : Number(header);
}

/** Names a connection the same way on its TCP socket and on the TLS socket over it. */
function peerKey(socket: Socket): string | undefined {
  const { remoteAddress, remotePort } = socket;
  return remoteAddress === undefined || remotePort === undefined ? undefined : `${remoteAddress}:${remotePort}`;
}

/** A request stopped before its body arrived: answered with this and closed. */
class BodyCut extends Error {
  readonly status: 408 | 429;
  constructor(status: 408 | 429, why: string) {
    super(why);
    this.status = status;
  }
}

/**
 * The body, or BodyCut once the deadline passes or the request is cut to make room for another; its
 * bytes are counted as they arrive, so a request holds only what it has sent.
 */
async function receive(
  request: IncomingMessage,
  ticket: AdmissionTicket,
  cut: Promise<never>,
  maxBytes: number,
): Promise<Buffer> {
  const onData = (chunk: Buffer): void => ticket.received(chunk.length);
  request.on("data", onData);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      ticket.release();
      reject(new BodyCut(408, "body too slow"));
    }, BodyDeadlineMs);
  });
  try {
    return await Promise.race([readBody(request, maxBytes), cut, late]);
  } finally {
    clearTimeout(timer);
    request.off("data", onData);
    ticket.releaseBytes();
  }
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  options: AdmissionServerOptions,
  limits: AdmissionLimits,
  capacity: AdmissionCapacity,
  roster: ConnectionRoster,
): Promise<void> {
  const connection = peerKey(request.socket);
  if (connection !== undefined) {
    roster.progressed(connection);
    response.once("close", () => roster.progressed(connection));
  }
  const path = new URL(request.url ?? "/", "https://localhost").pathname;
  if (path !== AdmissionWebhookPath) return reply(response, 404, { status: "not found" });
  if (request.method !== "POST") return reply(response, 405, { status: "method not allowed" });
  const announced = announcedLength(request);
  if (announced !== undefined && announced > limits.maxBodyBytes)
    return reply(response, 413, { status: "too large" }, true);
  const cut = Promise.withResolvers<never>();
  const ticket = capacity.tryAdmit(() => cut.reject(new BodyCut(429, "busy")));
  if (ticket === undefined) {
    // Every slot holds a review being answered. The API server applies failurePolicy (Ignore) and records
    // the webhook as failed open.
    response.setHeader("retry-after", "1");
    return reply(response, 429, { status: "busy" }, true);
  }
  response.once("close", ticket.release);
  let reviewed: Reviewed;
  try {
    // No local keeps the body: it is garbage once reviewed.
    reviewed = review(await receive(request, ticket, cut.promise, limits.maxBodyBytes), limits.maxJsonTokens);
  } catch (error) {
    if (error instanceof BodyCut) {
      if (error.status === 429) response.setHeader("retry-after", "1");
      return reply(response, error.status, { status: error.message }, true);
    }
    if (error instanceof BodyTooLarge) return reply(response, 413, { status: "too large" }, true);
    if (error instanceof BodyIncomplete) return;
    throw error;
  }
  if (connection !== undefined) roster.answering(connection);
  if (reviewed.kind === "invalid") return reply(response, reviewed.status, { status: reviewed.why });
  const decision = await settleInCluster(reviewed.decision, reviewed.recheck, options.lookups);
  if (!decision.allowed) options.log.info("admission refused", { ...reviewed.who, message: decision.message });
  reply(response, 200, {
    apiVersion: reviewed.apiVersion,
    kind: "AdmissionReview",
    response: decision.allowed
      ? { uid: reviewed.uid, allowed: true }
      : {
          uid: reviewed.uid,
          allowed: false,
          status: { code: 403, reason: decision.reason, message: decision.message },
        },
  });
}

/** Every connection, from its TCP accept, on the roster: over the cap, the one idle longest is closed. */
function rosterConnections(server: Server, roster: ConnectionRoster): void {
  server.on("connection", (socket: Socket) => {
    const key = peerKey(socket);
    if (key === undefined) return void socket.destroy();
    socket.once("close", () => roster.remove(key));
    roster.add(key, () => socket.destroy());
  });
}

export async function serveAdmission(options: AdmissionServerOptions): Promise<AdmissionServer> {
  const limits: AdmissionLimits = { ...DefaultAdmissionLimits, ...options.limits };
  const capacity = new AdmissionCapacity(limits);
  const connections = connectionLimits({ ...AdmissionConnectionLimits, ...options.connectionLimits });
  const roster = new ConnectionRoster(connections.maxConnections);
  const server: Server = createServer(
    {
      cert: options.tls.cert,
      key: options.tls.key,
      minVersion: "TLSv1.2",
      ...connectionServerOptions(connections),
    },
    (request, response) => {
      handle(request, response, options, limits, capacity, roster).catch((error: unknown) => {
        // The API server then applies failurePolicy (Ignore): the write goes through.
        options.log.error("admission handler failed", { error: String(error) });
        if (!response.headersSent) reply(response, 500, { status: "error" });
        else response.destroy();
      });
    },
  );
  limitConnections(server, connections);
  // The roster keeps the cap by closing the connection idle longest; Node's own cap (refusing the newest)
  // stays one above it, as a backstop.
  server.maxConnections = connections.maxConnections + 1;
  rosterConnections(server, roster);
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
    setCertificate: (tls) => server.setSecureContext({ cert: tls.cert, key: tls.key, minVersion: "TLSv1.2" }),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)));
        server.closeAllConnections();
        // And those still in their handshake, which the HTTP layer does not know of.
        roster.closeAll();
      }),
  };
}
